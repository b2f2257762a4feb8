import { quantile } from "../../protocol/quantile.ts";

/**
 * When to hedge, and how often we may. "The Tail at Scale" (Dean & Barroso): a second request sent once
 * the first has taken longer than its p95 cuts the tail for about 5% extra load. Both policies are pure.
 */

export interface HedgeDelayOptions {
  /** Delay before there are enough samples, in ms. */
  defaultMs: number;
  /** Samples needed before the observed quantile is trusted. Default 20. */
  minSamples?: number;
  /** Quantile of observed latency to wait for. Default 0.95. */
  quantile?: number;
}

/** How long to wait for the first region before hedging to the next: its observed p95 (nearest rank), or the default. */
export function hedgeDelay(samples: readonly number[], options: HedgeDelayOptions): number {
  const { defaultMs, minSamples = 20, quantile: q = 0.95 } = options;
  return samples.length < Math.max(1, minSamples) ? defaultMs : quantile(samples, q);
}

/**
 * The hedge budget, a token bucket like gRPC's retry throttling: every forwarded request earns `ratio` of
 * a token, a hedge spends one, the bucket holds at most `burst`. Over any run of n forwarded requests at
 * most `ratio * n + burst` hedges go out.
 */
export interface HedgeBudget {
  tokens: number;
}

export function hedgeBudgetEarn(budget: HedgeBudget, ratio: number, burst: number): HedgeBudget {
  return { tokens: Math.min(burst, budget.tokens + ratio) };
}

export function hedgeBudgetSpend(budget: HedgeBudget): { ok: boolean; budget: HedgeBudget } {
  return budget.tokens >= 1 ? { ok: true, budget: { tokens: budget.tokens - 1 } } : { ok: false, budget };
}
