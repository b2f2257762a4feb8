import { RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

/** Count each sent call's outcome and keep answer latencies, from which the hedge delay is computed. */
export const observe =
  (book: RegionBook): Interceptor =>
  (next) =>
  async (call) => {
    const name = call.region.name;
    try {
      const answer = await next(call);
      book.observe(name, "answered", answer.ms);
      return answer;
    } catch (err) {
      const code = err instanceof RegionError ? err.code : undefined;
      book.observe(name, code === "cancelled" ? "cancelled" : code === "timeout" ? "timedOut" : "failed");
      throw err;
    }
  };
