/**
 * The one quantile of the repository: nearest rank (Hyndman and Fan's definition 1, as Prometheus' summaries
 * and most load generators report): the `q`-quantile of n values is the ⌈q·n⌉-th smallest, the smallest value
 * with at least a share `q` of them at or below it. No interpolation, so every quantile is a value that was
 * measured. At 0.5 it is the lower median. The release gates, the probe, the benchmarks, the edge's hedge and
 * reach estimates and the pools' shadow figures all read it here.
 */

/** The `q`-quantile (0 ≤ q ≤ 1; 0 is the smallest) of values already sorted ascending; throws for none. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) throw new RangeError("the quantile of no values");
  // A hair under q·n before rounding up, so that 0.07·100 (7.000000000000001 in binary) is rank 7, not 8.
  const rank = Math.ceil(q * n - 1e-9);
  return sorted[Math.min(n - 1, Math.max(0, rank - 1))]!;
}

/** The `q`-quantile of values in any order (sorted as a copy); throws for none. */
export function quantile(values: readonly number[], q: number): number {
  return nearestRank(
    [...values].sort((a, b) => a - b),
    q,
  );
}
