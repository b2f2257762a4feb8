import { createHash, timingSafeEqual } from "node:crypto";
import { bearerToken } from "../protocol/bearer.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Whether an `authorization` value is `Bearer <expected>` (protocol/bearer.ts), compared in constant time over
 * SHA-256 digests, so neither the token's bytes nor its length leak through timing. The pool's admin token and
 * gRPC token are checked with it.
 */
export function bearerCheck(expected: string): (authorization: string | undefined) => boolean {
  const wanted = digest(expected);
  return (authorization) => {
    const token = bearerToken(authorization);
    return token !== undefined && timingSafeEqual(digest(token), wanted);
  };
}
