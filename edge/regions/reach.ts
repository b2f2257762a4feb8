import { quantile } from "../../protocol/quantile.ts";

/**
 * Budget-aware routing: whether a region can still answer within what is left of a request's budget,
 * predicted from what this isolate knows of it. A region that cannot is not tried, so it is never charged a
 * timeout for being far, and when no region can answer in time the edge answers at once from its own model
 * instead of waiting out the budget. Pure.
 *
 * The evidence is the isolate's own, gathered where it runs (docs/edge.md, "Budget-aware routing"): its calls'
 * answer times (a call cut off by the deadline counts as slower than any budget), its own warm probes,
 * and, until either exists, a prior from the great-circle distance between the colo and the region
 * (prior.ts). Round trips measured anywhere else (the cron's) are never used: the cron may run on another
 * continent.
 */

/** One answer time the isolate saw from a region: an answer, or a call cut off by the deadline. */
export interface AnswerSample {
  /** Time from sending to the answer, or to the cut-off, in ms. */
  ms: number;
  /** Unix ms when it ended. */
  at: number;
  /**
   * The deadline cut the call off after `ms`: the region is slower than the budget, by how much unknown. It
   * counts as slower than any budget until a warm probe measures the region again.
   */
  cutOff?: boolean;
  /** The call was a warm probe (edge/forward/warm-probe.ts), not a request's. */
  warmProbe?: boolean;
}

/** What the isolate knows of one region's answer time. */
export interface ReachEvidence {
  /** Its recent calls' answer times, requests' and warm probes', oldest first. */
  samples: readonly AnswerSample[];
  /** The round trip the distance from this colo predicts (prior.ts); undefined when the colo's place is unknown. */
  priorMs?: number;
}

/**
 * The answer time to expect from a region, in ms: the `q`-quantile (nearest rank, protocol/quantile.ts; default
 * 0.5, the lower median; REACH_QUANTILE) of the answer times from the latest warm probe on (that probe's included); without a warm
 * probe, of all of them; else the prior; undefined when nothing is known (such a region is tried: that is how
 * the edge learns). Infinite when calls cut off by the deadline reach that quantile: at 0.5 when most of them
 * were cut off, at 0.9 when more than one in ten was. A higher quantile keeps from a region the requests
 * it would likely not answer in time: each of those waits out the whole budget and then degrades anyway.
 *
 * Why from the latest warm probe: a region judged too far is no longer called by requests, so its answer
 * times cannot improve; the warm probe that a skip triggers (edge/forward/warm-probe.ts) is then the newer
 * evidence and replaces them, and the answers that follow it join it. A median, so that one slow call among
 * many does not move the estimate.
 */
export function expectedAnswerMs(evidence: ReachEvidence, q = 0.5): number | undefined {
  const { samples, priorMs } = evidence;
  if (samples.length === 0) return priorMs;
  const latestWarmProbe = samples.findLastIndex((s) => s.warmProbe);
  const since = latestWarmProbe < 0 ? samples : samples.slice(latestWarmProbe);
  return quantile(
    since.map((s) => (s.cutOff ? Number.POSITIVE_INFINITY : s.ms)),
    q,
  );
}

/** Whether a region expected to answer in `expectedMs` is worth trying with `budgetLeftMs` left. Unknown: yes. */
export function withinReach(expectedMs: number | undefined, budgetLeftMs: number): boolean {
  return expectedMs === undefined || expectedMs <= budgetLeftMs;
}

/**
 * The regions for a call that goes to a region whatever the estimate (`cascade: "regional"`, a model without
 * an edge variant): those in reach of `budgetLeftMs` first, then the rest, each group in the given order
 * (nearest first). Nothing is skipped, so the nearest region is tried when none is in reach; and a region
 * known to be slower than the budget does not take the whole budget while a nearer-in-time one could answer.
 */
export function reachFirst<R>(
  regions: readonly R[],
  expectedMs: (region: R) => number | undefined,
  budgetLeftMs: number,
): R[] {
  const inReach = regions.filter((r) => withinReach(expectedMs(r), budgetLeftMs));
  return [...inReach, ...regions.filter((r) => !inReach.includes(r))];
}
