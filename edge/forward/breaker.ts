import { breakerOpen, RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

/**
 * The region's circuit breaker: refuse the call while it is open (nothing is sent), and tell it how each
 * admitted call ended. A call cancelled because another region won says nothing about this region.
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
      const cancelled = err instanceof RegionError && err.code === "cancelled";
      book.record(name, cancelled ? "cancelled" : "failure", Date.now());
      throw err;
    }
  };
