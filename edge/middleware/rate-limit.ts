import type { MiddlewareHandler } from "hono";
import { RateLimited } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";

/**
 * Per-client rate limit with the Workers rate-limiting binding (`RATE_LIMITER`, `[[ratelimits]]` in
 * wrangler.toml): over the limit is a 429 whose Retry-After is the binding's period (the binding does not
 * say when its window resets). Without the binding there is no such limit. A key with a limit of its own
 * (`API_KEYS`' `rateLimit`) is also held to that, per isolate, with Retry-After the end of its window. Runs
 * after `apiKey`, which names the client and the tenant.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimit(c, next) {
    const limiter = c.env.RATE_LIMITER;
    if (limiter) {
      const { success } = await limiter.limit({ key: c.get("client") });
      if (!success) {
        const who = c.get("client").startsWith("key:") ? "API key" : "client address";
        throw new RateLimited(`rate limit exceeded for this ${who}`, c.get("runtime").options.rateLimitPeriodS);
      }
    }
    const { window, name } = c.get("tenant");
    if (window) {
      const taken = window.take(Date.now());
      if (!taken.ok) throw new RateLimited(`rate limit of tenant "${name}"'s API key exceeded`, taken.retryAfterS);
    }
    await next();
  };
}
