/**
 * Budget-aware routing: whether a region can still answer within what is left of a request's SLO budget,
 * predicted from what the edge knows of it. A region that cannot is not tried, so it is never charged a
 * timeout for being far (its breaker only hears of real failures), and when no region can answer in time the
 * edge answers at once from its own model instead of waiting out the budget. Pure.
 */

/** What the edge knows of one region's answer time. */
export interface ReachEvidence {
  /** The region's recent answer latencies (its latency window), in ms, in no particular order. */
  answers: readonly number[];
  /** Unix ms of its latest answer; undefined if it never answered. */
  lastAnswerAt?: number;
  /** The latest scheduled probe's round trip to it (`GET /v2/health/ready`), and when that probe ran. */
  probe?: { rttMs: number; at: number };
}

export interface ReachOptions {
  /**
   * Answers younger than this are trusted over the probe, in ms. Default 60000, the cron's period: a region
   * in use keeps answering and its answers are the direct measure; one out of use is judged by the probe.
   */
  recentMs?: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The answer time to expect from a region at `now`, in ms: the median of its recent answers while it has
 * answered within `recentMs`; otherwise whichever is fresher, the probe's round trip or its older answers;
 * undefined when nothing is known (such a region is tried: that is how the edge learns).
 *
 * Why the median of answers rather than the probe while answers are recent: a single slow probe must not lock
 * the nearest region out for a whole cron period, and answers measure exactly what the budget is spent on.
 */
export function expectedAnswerMs(evidence: ReachEvidence, now: number, options: ReachOptions = {}): number | undefined {
  const { recentMs = 60_000 } = options;
  const { answers, lastAnswerAt, probe } = evidence;
  const answered = answers.length > 0 && lastAnswerAt !== undefined;
  if (answered && now - lastAnswerAt < recentMs) return median(answers);
  if (probe && (!answered || probe.at >= lastAnswerAt)) return probe.rttMs;
  return answered ? median(answers) : undefined;
}

/** Whether a region expected to answer in `expectedMs` is worth trying with `budgetLeftMs` left. Unknown: yes. */
export function withinReach(expectedMs: number | undefined, budgetLeftMs: number): boolean {
  return expectedMs === undefined || expectedMs <= budgetLeftMs;
}
