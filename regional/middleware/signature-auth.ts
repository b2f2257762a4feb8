import type { MiddlewareHandler } from "hono";
import { Unauthorized } from "../../protocol/errors.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from "../../protocol/headers.ts";
import { verifyCall } from "../../protocol/signing.ts";

export interface EdgeSignatureOptions {
  /** The secret shared with the edge (`REGIONAL_SHARED_SECRET`). */
  secret: string;
  /** How far the signed timestamp may be from now, either way, in seconds. Default 30. */
  windowS?: number;
}

/**
 * Requires the edge's HMAC signature over method, path (with query), timestamp and body (protocol/signing.ts):
 * 401 naming what was wrong when it is missing, malformed, stale or does not match. Mount after the body limit.
 */
export function edgeSignature(options: EdgeSignatureOptions): MiddlewareHandler {
  const { secret, windowS = 30 } = options;
  return async function edgeSignature(c, next) {
    const url = new URL(c.req.url);
    const result = await verifyCall(
      secret,
      { method: c.req.method, path: url.pathname + url.search, body: await c.req.text() },
      c.req.header(TIMESTAMP_HEADER),
      c.req.header(SIGNATURE_HEADER),
      { windowS },
    );
    if (!result.ok) throw new Unauthorized(`edge signature required: ${result.reason}`);
    await next();
  };
}
