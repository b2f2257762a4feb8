import type { MiddlewareHandler } from "hono";
import { RateLimited } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";
import type { Caller } from "./api-key.ts";

/** Whether `checkRateLimits` has anything to check for this caller: a limiter binding or the key's own limit. */
export function hasRateLimits(limiter: RateLimit | undefined, caller: Caller): boolean {
  return limiter !== undefined || caller.tenant.window !== undefined;
}

/**
 * Per-client rate limit with the Workers rate-limiting binding (`RATE_LIMITER`, `[[ratelimits]]` in
 * wrangler.toml): over the limit is a 429 whose Retry-After is the binding's period (the binding does not
 * say when its window resets). Without the binding there is no such limit. A key with a limit of its own
 * (`API_KEYS`' `rateLimit`) is also held to that, per isolate, with Retry-After the end of its window.
 */
export async function checkRateLimits(limiter: RateLimit | undefined, caller: Caller, periodS: number): Promise<void> {
  if (limiter) {
    const { success } = await limiter.limit({ key: caller.client });
    if (!success) {
      const who = caller.client.startsWith("key:") ? "API key" : "client address";
      throw new RateLimited(`rate limit exceeded for this ${who}`, periodS);
    }
  }
  const { window, name } = caller.tenant;
  if (window) {
    const taken = window.take(Date.now());
    if (!taken.ok) throw new RateLimited(`rate limit of tenant "${name}"'s API key exceeded`, taken.retryAfterS);
  }
}

/** `checkRateLimits` for the caller `apiKey` named (it runs after it). */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimit(c, next) {
    const caller = { client: c.get("client"), tenant: c.get("tenant") };
    const rt = c.get("runtime");
    await checkRateLimits(rt.rateLimiter, caller, rt.options.rateLimitPeriodS);
    await next();
  };
}
