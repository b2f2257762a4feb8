/**
 * The token of an `Authorization: Bearer <token>` header, read one way by the edge's API keys, the pool's
 * admin token and its gRPC token: the scheme in any case, then one or more spaces and one token (RFC 6750
 * §2.1, RFC 9110 §11.4; spaces around the whole value are the header's, not the token's). Undefined for a
 * missing header, another scheme, no token, or more than one word after the scheme.
 */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  if (authorization === null || authorization === undefined) return undefined;
  return /^Bearer +(\S+)$/i.exec(authorization.trim())?.[1];
}
