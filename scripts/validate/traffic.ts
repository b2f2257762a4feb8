import type { HeldoutRow } from "../../protocol/heldout.ts";

/**
 * Realistic request traffic over a held-out set: a population of `distinct` inputs whose popularity follows
 * Zipf's law (the k-th most popular input is asked ∝ 1/k^s), so popular inputs repeat (cache hits) and the long
 * tail is mostly seen once. Input k is held-out row `order[k mod rows]`, unchanged for the first pass over the
 * rows and otherwise with a tiny offset on one value that makes it a different input (a different cache key)
 * the models cannot tell apart, so the held-out mix of rows the edge model is sure and unsure of is kept. Pure.
 */
export interface TrafficOptions {
  /** Distinct inputs in the population. Default 100000. */
  distinct?: number;
  /** Zipf exponent s. Default 1. */
  zipfS?: number;
  /** Size of the offset step that tells variants of one row apart. Default 1e-3 (values are 0-16). */
  offsetStep?: number;
}

export interface TrafficRequest {
  /** Popularity rank of the input, 0 = the most popular. */
  rank: number;
  /** Index into the held-out rows. */
  row: number;
  input: number[];
}

/** A sampler of ranks 0..n-1 with P(k) ∝ 1/(k+1)^s, by inverse CDF. */
export function zipfSampler(n: number, s: number, random: () => number): () => number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`distinct must be a positive integer, got ${n}`);
  if (!(s >= 0)) throw new Error(`zipfS must be >= 0, got ${s}`);
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / (k + 1) ** s;
    cdf[k] = sum;
  }
  return () => {
    const u = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The input of popularity rank `rank`: see the module comment. */
export function inputOfRank(rows: readonly HeldoutRow[], order: readonly number[], rank: number, step: number) {
  const row = order[rank % rows.length]!;
  const variant = Math.floor(rank / rows.length);
  const input = rows[row]!.input.slice();
  if (variant > 0) {
    const at = (variant - 1) % input.length;
    input[at] = input[at]! + (1 + Math.floor((variant - 1) / input.length)) * step;
  }
  return { row, input };
}

/** A generator of requests: Zipf-popular inputs over a seeded shuffle of the rows. */
export function zipfTraffic(
  rows: readonly HeldoutRow[],
  random: () => number,
  options: TrafficOptions = {},
): () => TrafficRequest {
  const { distinct = 100_000, zipfS = 1, offsetStep = 1e-3 } = options;
  const order = rows.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const rank = zipfSampler(distinct, zipfS, random);
  return () => {
    const k = rank();
    return { rank: k, ...inputOfRank(rows, order, k, offsetStep) };
  };
}
