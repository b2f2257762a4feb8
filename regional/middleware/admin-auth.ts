import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { Unauthorized } from "../../protocol/errors.ts";

export interface AdminTokenOptions {
  /** `ADMIN_TOKEN`; unset, every call is refused (model control is off rather than open). */
  token?: string;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Requires `Authorization: Bearer <token>`, compared in constant time (over digests, so lengths do not leak). */
export function adminToken(options: AdminTokenOptions): MiddlewareHandler {
  const expected = options.token ? digest(options.token) : undefined;
  return async function adminToken(c, next) {
    if (!expected) throw new Unauthorized("model control is disabled: ADMIN_TOKEN is not set");
    const match = /^Bearer +(\S+) *$/i.exec(c.req.header("authorization") ?? "");
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new Unauthorized("model control requires Authorization: Bearer <ADMIN_TOKEN>");
    }
    await next();
  };
}
