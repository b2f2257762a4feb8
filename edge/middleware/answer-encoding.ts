import type { MiddlewareHandler } from "hono";
import { type AnswerCoding, answerCoding } from "../../protocol/content-coding.ts";
import type { AppEnv } from "../app-env.ts";

/** A successful v2 infer answer: the only answer Triton compresses. */
const INFER_PATH = /\/infer\/?$/;

/**
 * What coding a v2 answer gets, as Triton decides it (protocol/content-coding.ts): a 200 infer answer the coding
 * the request's Accept-Encoding prefers among gzip and deflate; anything else (metadata, health, config, errors)
 * none. Undefined: nothing to do (no Accept-Encoding, so nothing downstream compresses either).
 */
export function v2AnswerCoding(
  request: { method: string; path: string; acceptEncoding: string | undefined },
  status: number,
): AnswerCoding | undefined {
  if (!request.acceptEncoding) return undefined;
  const infer = request.method === "POST" && status === 200 && INFER_PATH.test(request.path);
  return infer ? answerCoding(request.acceptEncoding) : "identity";
}

/**
 * The client's own Accept-Encoding. Cloudflare replaces the header a Worker sees (with `br, gzip`, whatever the
 * client sent) and keeps the client's in `request.cf.clientAcceptEncoding` (empty: none); Miniflare does the same.
 */
export function clientAcceptEncoding(request: Request): string | undefined {
  const original = (request.cf as { clientAcceptEncoding?: unknown } | undefined)?.clientAcceptEncoding;
  if (typeof original === "string") return original === "" ? undefined : original;
  return request.headers.get("accept-encoding") ?? undefined;
}

/**
 * The v2 API's answers follow Triton's compression rule rather than Cloudflare's. Cloudflare (and Miniflare's
 * emulation of it in local workerd) gzips any JSON answer for a client whose Accept-Encoding allows it, and
 * tritonclient's asyncio client sends aiohttp's `Accept-Encoding: gzip, deflate` with decompression turned off:
 * its metadata and readiness calls then failed to parse. So: an infer answer is compressed here, by
 * CompressionStream, when Triton would compress it (and sent as is: `encodeBody: "manual"`); every other answer
 * to a request with Accept-Encoding says `Content-Encoding: identity`, which Cloudflare leaves alone (it compresses
 * only answers without a Content-Encoding, or already gzip or br). `identity` in Content-Encoding is unusual
 * (RFC 9110 §8.4.1 reserves it for Accept-Encoding) and read as no coding by the clients tried (aiohttp, httpx,
 * urllib3, undici, browsers pass it through).
 */
export function tritonAnswerEncoding(): MiddlewareHandler<AppEnv> {
  return async function tritonAnswerEncoding(c, next) {
    await next();
    const res = c.res;
    if (res.headers.has("content-encoding")) return;
    const coding = v2AnswerCoding(
      { method: c.req.method, path: c.req.path, acceptEncoding: clientAcceptEncoding(c.req.raw) },
      res.status,
    );
    if (coding === undefined) return;
    const headers = new Headers(res.headers);
    headers.set("content-encoding", coding);
    let body = res.body;
    if (coding !== "identity" && body) {
      body = body.pipeThrough(new CompressionStream(coding));
      headers.delete("content-length");
      headers.append("vary", "accept-encoding");
    }
    // Unset first: Hono's setter would otherwise copy the answer into a new Response, which drops encodeBody.
    c.res = undefined;
    c.res = new Response(body, { status: res.status, statusText: res.statusText, headers, encodeBody: "manual" });
  };
}
