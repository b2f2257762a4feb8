import { createHmac, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { Unauthorized } from "../../protocol/errors.ts";
import { AUDIT_HEADER, SIGNATURE_HEADER, TENANT_HEADER, TIMESTAMP_HEADER } from "../../protocol/headers.ts";
import {
  MISMATCH,
  presentedSignature,
  type SignedCall,
  signedMessage,
  type VerifyOptions,
  type VerifyResult,
} from "../../protocol/signing.ts";

export interface EdgeSignatureOptions {
  /** The secret shared with the edge (`REGIONAL_SHARED_SECRET`). */
  secret: string;
  /** How far the signed timestamp may be from now, either way, in seconds. Default 30. */
  windowS?: number;
}

/**
 * Check a call's signature (protocol/signing.ts) with node:crypto: the timestamp within the window, the HMAC
 * compared in constant time, computed on this thread. Node's WebCrypto runs every `verify` as a job on the
 * libuv thread pool, and the hop there and back cost each signed call about 0.1 ms of latency on an idle pool
 * (docs/performance.md).
 */
export function verifyCallNow(
  secret: string,
  call: Omit<SignedCall, "timestamp">,
  timestamp: string | null | undefined,
  signature: string | null | undefined,
  options: VerifyOptions = {},
): VerifyResult {
  const presented = presentedSignature(timestamp, signature, options);
  if (!presented.ok) return presented;
  const expected = createHmac("sha256", secret)
    .update(signedMessage({ ...call, timestamp: presented.timestamp }))
    .digest();
  return timingSafeEqual(expected, presented.signature) ? { ok: true } : MISMATCH;
}

/**
 * Throws 401 naming what was wrong when a call's signature (protocol/signing.ts) is missing, malformed,
 * stale or does not match. The fast path (regional/fast-path/) checks calls with this too.
 */
export function checkEdgeSignature(
  options: EdgeSignatureOptions,
  call: Omit<SignedCall, "timestamp">,
  timestamp: string | undefined,
  signature: string | undefined,
): void {
  const result = verifyCallNow(options.secret, call, timestamp, signature, { windowS: options.windowS ?? 30 });
  if (!result.ok) throw new Unauthorized(`edge signature required: ${result.reason}`);
}

/**
 * Requires the edge's HMAC signature over method, path (with query), timestamp, tenant and audit labels (when the
 * call carries them) and body bytes: 401 naming what was wrong otherwise. Mount after the body limit.
 */
export function edgeSignature(options: EdgeSignatureOptions): MiddlewareHandler {
  return async function edgeSignature(c, next) {
    const url = new URL(c.req.url);
    checkEdgeSignature(
      options,
      {
        method: c.req.method,
        path: url.pathname + url.search,
        body: new Uint8Array(await c.req.arrayBuffer()),
        tenant: c.req.header(TENANT_HEADER),
        audit: c.req.header(AUDIT_HEADER),
      },
      c.req.header(TIMESTAMP_HEADER),
      c.req.header(SIGNATURE_HEADER),
    );
    await next();
  };
}
