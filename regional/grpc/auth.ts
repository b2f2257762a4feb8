import { createHmac } from "node:crypto";
import { Unauthorized } from "../../protocol/errors.ts";
import { bearerCheck } from "../bearer-check.ts";

/** What the gRPC token is the HMAC of (with `REGIONAL_SHARED_SECRET`); a new scheme would change the suffix. */
export const GRPC_TOKEN_MESSAGE = "edgecascade-grpc-v1";

/**
 * The bearer token gRPC clients present when the pool has `REGIONAL_SHARED_SECRET`: hex HMAC-SHA256 of
 * `edgecascade-grpc-v1` with the secret. Why not the edge's per-call HMAC: it signs the exact body bytes,
 * which tritonclient and KServe's client serialize themselves and cannot sign; they can send a header per
 * call. Why not the secret itself: gRPC inside a cluster is usually plaintext, and a token read off the wire
 * then opens gRPC inference only, without letting its reader sign HTTP calls as the edge.
 */
export function grpcToken(sharedSecret: string): string {
  return createHmac("sha256", sharedSecret).update(GRPC_TOKEN_MESSAGE).digest("hex");
}

/**
 * The check of `authorization` metadata for inference calls: with a secret, `Bearer <grpcToken(secret)>`,
 * compared in constant time (regional/bearer-check.ts), else 401 (UNAUTHENTICATED); without one,
 * every call passes, as HTTP inference does.
 */
export function grpcAuth(sharedSecret: string | undefined): (authorization: string | undefined) => void {
  if (sharedSecret === undefined) return () => {};
  const check = bearerCheck(grpcToken(sharedSecret));
  return (authorization) => {
    if (authorization === undefined) {
      throw new Unauthorized("gRPC inference requires authorization metadata: Bearer <token> (docs/regional.md#grpc)");
    }
    if (!check(authorization)) {
      throw new Unauthorized("the authorization metadata is not Bearer <token> with this pool's gRPC token");
    }
  };
}
