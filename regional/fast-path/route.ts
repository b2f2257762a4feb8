import { INFERENCE_ROUTES } from "../routes/inference.ts";

/** An inference request the fast path answers, with the Hono route pattern it is counted under. */
export type FastRoute =
  | { kind: "classify"; pattern: typeof INFERENCE_ROUTES.classify }
  | { kind: "infer"; pattern: typeof INFERENCE_ROUTES.infer; model: string }
  | { kind: "infer"; pattern: typeof INFERENCE_ROUTES.inferVersion; model: string; version: string };

/** The request line and headers the choice looks at (as node:http gives them). */
export interface RequestHead {
  method?: string;
  url?: string;
  host?: string;
  transferEncoding?: string;
}

// Model names and versions as the repository allows them (regional/repository.ts): no `%`, so the path needs
// no decoding, and never `.` or `..`.
const SEGMENT = "[A-Za-z0-9_][\\w.-]*";
const INFER = new RegExp(`^/v2/models/(${SEGMENT})/(?:versions/(${SEGMENT})/)?infer$`);
/**
 * A host name, IPv4 or bracketed IPv6 address, and port, or nothing (HTTP/1.0): what @hono/node-server accepts
 * without a second look.
 */
const PLAIN_HOST = /^(?:[\w.-]*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Which inference request the fast path takes: a POST to `/v1/classify` or a v2 `infer` path, written plainly
 * (no query string, no percent-encoding), with a Content-Length body and a plain Host. Everything else is
 * undefined and goes to the Hono app, which serves those routes too: the fast path only ever declines.
 * Chunked bodies go there because Hono's `bodyLimit` counts them as they stream; encoded paths and odd Host
 * headers because Hono's URL handling decodes or refuses them.
 */
export function fastRoute(head: RequestHead): FastRoute | undefined {
  const { method, url, host, transferEncoding } = head;
  if (method !== "POST" || url === undefined || transferEncoding !== undefined) return undefined;
  if (host !== undefined && !PLAIN_HOST.test(host)) return undefined;
  if (url === INFERENCE_ROUTES.classify) return { kind: "classify", pattern: INFERENCE_ROUTES.classify };
  const match = INFER.exec(url);
  if (!match) return undefined;
  const [, model, version] = match as unknown as [string, string, string | undefined];
  return version === undefined
    ? { kind: "infer", pattern: INFERENCE_ROUTES.infer, model }
    : { kind: "infer", pattern: INFERENCE_ROUTES.inferVersion, model, version };
}
