import type { MiddlewareHandler } from "hono";
import { RateLimited } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";

/**
 * Per-client rate limit with the Workers rate-limiting binding (`RATE_LIMITER`, `[[ratelimits]]` in
 * wrangler.toml): over the limit is a 429 whose Retry-After is the binding's period (the binding does not
 * say when its window resets). Without the binding there is no limit. Runs after `apiKey`, which names
 * the client.
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
    await next();
  };
}
