import { RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

type Counter = "failed" | "timedOut" | "cancelled" | "wrongVersion" | "modelUnavailable";

/** The counter a failed call goes to; none for a call that was never sent. */
function counterOf(err: unknown): Counter | undefined {
  const code = err instanceof RegionError ? err.code : undefined;
  if (code === "budget_spent") return undefined;
  if (code === "cancelled") return "cancelled";
  if (code === "timeout") return "timedOut";
  if (code === "wrong_version") return "wrongVersion";
  if (code === "model_unavailable") return "modelUnavailable";
  return "failed";
}

/**
 * Count each sent call's outcome and keep answer latencies (the hedge delay and the reach estimate are computed
 * from them); a call the deadline cut off counts as at least as slow as it was waited for.
 */
export const observe =
  (book: RegionBook): Interceptor =>
  (next) =>
  async (call) => {
    const name = call.region.name;
    const sentAt = Date.now();
    try {
      const answer = await next(call);
      book.observe(name, "answered", answer.ms, { warmProbe: call.warmProbe });
      return answer;
    } catch (err) {
      const counter = counterOf(err);
      if (counter) {
        book.observe(name, counter, counter === "timedOut" ? Date.now() - sentAt : undefined, {
          warmProbe: call.warmProbe,
        });
      }
      throw err;
    }
  };
