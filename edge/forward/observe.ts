import { RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

type Counter = "failed" | "timedOut" | "cancelled" | "wrongVersion";

/** The counter a failed call goes to; none for a call that was never sent. */
function counterOf(err: unknown): Counter | undefined {
  const code = err instanceof RegionError ? err.code : undefined;
  if (code === "budget_spent") return undefined;
  if (code === "cancelled") return "cancelled";
  if (code === "timeout") return "timedOut";
  if (code === "wrong_version") return "wrongVersion";
  return "failed";
}

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
      const counter = counterOf(err);
      if (counter) book.observe(name, counter);
      throw err;
    }
  };
