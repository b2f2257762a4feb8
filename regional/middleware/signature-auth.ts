import type { MiddlewareHandler } from "hono";
import { Unauthorized } from "../../protocol/errors.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from "../../protocol/headers.ts";
import { type SignedCall, verifyCall } from "../../protocol/signing.ts";

export interface EdgeSignatureOptions {
  /** The secret shared with the edge (`REGIONAL_SHARED_SECRET`). */
  secret: string;
  /** How far the signed timestamp may be from now, either way, in seconds. Default 30. */
  windowS?: number;
}

/**
 * Throws 401 naming what was wrong when a call's signature (protocol/signing.ts) is missing, malformed,
 * stale or does not match. The fast path (regional/fast-path/) checks calls with this too.
 */
export async function checkEdgeSignature(
  options: EdgeSignatureOptions,
  call: Omit<SignedCall, "timestamp">,
  timestamp: string | undefined,
  signature: string | undefined,
): Promise<void> {
  const result = await verifyCall(options.secret, call, timestamp, signature, { windowS: options.windowS ?? 30 });
  if (!result.ok) throw new Unauthorized(`edge signature required: ${result.reason}`);
}

/**
 * Requires the edge's HMAC signature over method, path (with query), timestamp and body bytes: 401 naming
 * what was wrong otherwise. Mount after the body limit.
 */
export function edgeSignature(options: EdgeSignatureOptions): MiddlewareHandler {
  return async function edgeSignature(c, next) {
    const url = new URL(c.req.url);
    await checkEdgeSignature(
      options,
      { method: c.req.method, path: url.pathname + url.search, body: new Uint8Array(await c.req.arrayBuffer()) },
      c.req.header(TIMESTAMP_HEADER),
      c.req.header(SIGNATURE_HEADER),
    );
    await next();
  };
}
