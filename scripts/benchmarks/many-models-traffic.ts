import { nearestRank } from "../../protocol/quantile.ts";

/**
 * The traffic of bench:many-models, pure: which model each request asks for (Zipf popularity over the models,
 * in a seeded shuffled order, so that the hottest models are not all copies of one sample), and what a run's
 * answers amount to for the hot models, the edge share and failures.
 */

/** `names` in a seeded shuffled order: popularity rank r is `order[r]`. */
export function popularityOrder(names: readonly string[], random: () => number): string[] {
  const order = [...names];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** One answered (or failed) request of a run. */
export interface Answered {
  rank: number;
  latencyMs: number;
  status: number;
  servedBy: string;
  /** Why a degraded answer lacks the regional one (`x-edgecascade-degraded`). */
  degraded?: string;
  /** When the answer came, in seconds since the run started. */
  atS?: number;
}

/** One of the hot requests that set the p99: how long it took, who answered, when. */
export interface TailRequest {
  ms: number;
  servedBy: string;
  atS: number;
}

/** What a run amounted to: the hot models' latency, everyone's, the edge share and failures. */
export interface RunFigures {
  requests: number;
  failed: number;
  /** Failed requests by status (0: no answer). */
  failedBy: Record<string, number>;
  /** Requests answered by the edge variant (servedBy "edge"), of all answered. */
  edgeShare: number;
  forwarded: number;
  degraded: number;
  /** Degraded answers by reason. */
  degradedBy: Record<string, number>;
  /**
   * `tail`: the hot requests at or above the p99, in the order they were answered: several answered within a few
   * ms of each other waited for one stall (of the isolate's thread, or of the machine), not each for its own.
   */
  hot: { requests: number; p50Ms: number; p99Ms: number; tail: TailRequest[] };
  all: { p50Ms: number; p99Ms: number };
  /** Distinct models asked for in the run. */
  models: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** A run's figures; the hot models are the `hot` most popular (ranks below it). */
export function runFigures(answers: readonly Answered[], hot: number): RunFigures {
  const ok = answers.filter((a) => a.status === 200);
  const latencies = (xs: readonly Answered[]) => xs.map((a) => a.latencyMs).sort((a, b) => a - b);
  const hotAnswers = ok.filter((a) => a.rank < hot);
  const hotOk = latencies(hotAnswers);
  const all = latencies(ok);
  const q = (xs: number[], p: number) => (xs.length === 0 ? 0 : r3(nearestRank(xs, p)));
  const hotP99 = hotOk.length === 0 ? Number.POSITIVE_INFINITY : nearestRank(hotOk, 0.99);
  const tail = hotAnswers
    .filter((a) => a.latencyMs >= hotP99)
    .map((a) => ({ ms: r3(a.latencyMs), servedBy: a.servedBy, atS: r3(a.atS ?? Number.NaN) }))
    .sort((a, b) => a.atS - b.atS);
  return {
    requests: answers.length,
    failed: answers.length - ok.length,
    failedBy: countBy(answers.filter((a) => a.status !== 200).map((a) => String(a.status))),
    edgeShare: ok.length === 0 ? 0 : r3(ok.filter((a) => a.servedBy === "edge").length / ok.length),
    forwarded: ok.filter((a) => a.servedBy.startsWith("regional:")).length,
    degraded: ok.filter((a) => a.servedBy === "degraded").length,
    degradedBy: countBy(ok.filter((a) => a.servedBy === "degraded").map((a) => a.degraded ?? "unknown")),
    hot: { requests: hotOk.length, p50Ms: q(hotOk, 0.5), p99Ms: q(hotOk, 0.99), tail },
    all: { p50Ms: q(all, 0.5), p99Ms: q(all, 0.99) },
    models: new Set(answers.map((a) => a.rank)).size,
  };
}

function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
