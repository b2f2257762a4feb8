import { breakerOpen, RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

/**
 * Codes that say nothing about the region's health: it lost a hedge, nothing was sent, it answered that it
 * does not serve the version the client pinned (a rollout in progress, not an outage) or this one model now
 * (its other models serve), it refused the request's tenant as best-effort (the pool works, for reservations first),
 * or the request's own
 * budget ran out first. Slower than a budget is far, not failing: the cut-off's wait goes to the reach estimate
 * (observe.ts), which keeps the region out of requests' way until a warm probe finds it in reach again, so a
 * loaded machine or a client's short budget never ejects a region for the breaker's cool-down.
 */
const NEUTRAL: ReadonlySet<RegionError["code"]> = new Set([
  "cancelled",
  "budget_spent",
  "wrong_version",
  "model_unavailable",
  "timeout",
  "tenant_shed",
]);

/**
 * The region's circuit breaker: refuse the call while it is open (nothing is sent), and tell it how each
 * admitted call ended. Neutral outcomes (NEUTRAL) neither count as failures nor reset the count.
 */
export const breaker =
  (book: RegionBook): Interceptor =>
  (next) =>
  async (call) => {
    const name = call.region.name;
    if (!book.admit(name, Date.now())) throw breakerOpen(name);
    try {
      const answer = await next(call);
      book.record(name, "success", Date.now());
      return answer;
    } catch (err) {
      const neutral = err instanceof RegionError && NEUTRAL.has(err.code);
      book.record(name, neutral ? "neutral" : "failure", Date.now());
      throw err;
    }
  };
