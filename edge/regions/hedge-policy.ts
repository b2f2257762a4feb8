import { quantile } from "../../protocol/quantile.ts";

/**
 * When to hedge, and how often we may. "The Tail at Scale" (Dean & Barroso): a second request sent once
 * the first has taken longer than its p95 cuts the tail for about 5% extra load. Pure.
 *
 * How often we may hedge is a token bucket filled by events, like gRPC's retry throttling
 * (protocol/token-bucket.ts `earn`, `take`; forward/region-book.ts): every forwarded request earns
 * `HEDGE_BUDGET_RATIO` of a token, a hedge takes one, the bucket holds at most `HEDGE_BUDGET_BURST`; over any run
 * of n forwarded requests at most `ratio * n + burst` hedges go out.
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
