import { RegionError } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor, RegionCall } from "./types.ts";

type Counter = "failed" | "timedOut" | "cancelled" | "wrongVersion" | "modelUnavailable" | "shed";

/** The counter a failed call goes to; none for a call that was never sent. */
function counterOf(err: unknown): Counter | undefined {
  const code = err instanceof RegionError ? err.code : undefined;
  if (code === "budget_spent") return undefined;
  if (code === "cancelled") return "cancelled";
  if (code === "timeout") return "timedOut";
  if (code === "wrong_version") return "wrongVersion";
  if (code === "model_unavailable") return "modelUnavailable";
  if (code === "tenant_shed") return "shed";
  return "failed";
}

/** What a call's time is evidence of: a warm probe's or a request's, from its place; none for a warm-up's. */
const evidenceOf = (call: RegionCall) => ({
  warmProbe: call.warmProbe,
  location: call.location,
  evidence: !call.warmUp,
});

/**
 * Count each sent call's outcome and keep answer latencies (the hedge delay and the reach estimate of the place
 * the request came from are computed from them); a call the deadline cut off counts as at least as slow as it
 * was waited for. A warm-up request's call is counted only, and so is an answer that waited for its model to load
 * on demand at the region (`loadMs`): its time is the load's, not the region's distance.
 */
export const observe =
  (book: RegionBook): Interceptor =>
  (next) =>
  async (call) => {
    const name = call.region.name;
    const sentAt = Date.now();
    try {
      const answer = await next(call);
      const evidence = evidenceOf(call);
      if (answer.loadMs !== undefined) evidence.evidence = false;
      book.observe(name, "answered", answer.ms, evidence);
      return answer;
    } catch (err) {
      const counter = counterOf(err);
      if (counter) {
        book.observe(name, counter, counter === "timedOut" ? Date.now() - sentAt : undefined, evidenceOf(call));
      }
      throw err;
    }
  };
