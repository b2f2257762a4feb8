import type { MiddlewareHandler } from "hono";
import { Unauthorized } from "../../protocol/errors.ts";
import { bearerCheck } from "../bearer-check.ts";

export interface AdminTokenOptions {
  /** `ADMIN_TOKEN`; unset, every call is refused (model control is off rather than open). */
  token?: string;
}

/** Requires `Authorization: Bearer <token>`, compared in constant time (regional/bearer-check.ts). */
export function adminToken(options: AdminTokenOptions): MiddlewareHandler {
  const check = options.token ? bearerCheck(options.token) : undefined;
  return async function adminToken(c, next) {
    if (!check) throw new Unauthorized("model control is disabled: ADMIN_TOKEN is not set");
    if (!check(c.req.header("authorization"))) {
      throw new Unauthorized("model control requires Authorization: Bearer <ADMIN_TOKEN>");
    }
    await next();
  };
}
