import type { MiddlewareHandler } from "hono";
import { sha256Hex } from "../../protocol/digest.ts";
import { Unauthorized } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";

const encoder = new TextEncoder();

/** The key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return bearer ?? (apiKeyHeader?.trim() || undefined);
}

/**
 * Optional API keys (`API_KEYS`): when any are configured, a request without one of them is a 401.
 * Sets `client` for the rate limiter: a digest of the key (the key itself never leaves this layer),
 * or the client IP when keys are off.
 */
export function apiKey(): MiddlewareHandler<AppEnv> {
  return async function apiKey(c, next) {
    const keys = c.var.runtime.options.apiKeys;
    const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (keys.size > 0) {
      if (!key) throw new Unauthorized("missing API key: send Authorization: Bearer <key> or x-api-key");
      if (!keys.has(key)) throw new Unauthorized("invalid API key");
      c.set("client", `key:${(await sha256Hex(encoder.encode(key))).slice(0, 16)}`);
    } else {
      c.set("client", `ip:${c.req.header("cf-connecting-ip") ?? "unknown"}`);
    }
    await next();
  };
}
