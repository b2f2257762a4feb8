/** The one route the Worker's fast path answers. */
export const FAST_CLASSIFY_PATH = "/v1/classify";

/** What the choice looks at of a request. */
export interface RequestHead {
  method: string;
  /** The absolute URL, as `Request.url` gives it. */
  url: string;
  contentLength: string | null;
  transferEncoding: string | null;
}

/**
 * Whether the fast path takes a request: a POST to `/v1/classify` written plainly (no query string, no
 * percent-encoding) with a Content-Length body. Everything else goes to the Hono app, which serves that route
 * too: the fast path only ever declines. Chunked bodies go there because Hono's `bodyLimit` counts them as
 * they stream; encoded paths because Hono's routing decodes them.
 */
export function takesFastClassify(head: RequestHead): boolean {
  if (head.method !== "POST" || head.contentLength === null || head.transferEncoding !== null) return false;
  const { url } = head;
  const scheme = url.indexOf("://");
  const path = scheme < 0 ? -1 : url.indexOf("/", scheme + 3);
  return path >= 0 && url.length - path === FAST_CLASSIFY_PATH.length && url.endsWith(FAST_CLASSIFY_PATH);
}
