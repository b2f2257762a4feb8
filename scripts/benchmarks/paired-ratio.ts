/** A scenario's ratio to its baseline over rounds: the median of the per-round ratios and their range. */
export interface PairedRatio {
  median: number;
  min: number;
  max: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * `values[i] / baseline[i]` for each round both have (null: not measured that round), summarised. Pairing by
 * round cancels load from elsewhere that comes and goes between rounds; undefined when no round has both.
 */
export function pairedRatio(
  values: readonly (number | null)[],
  baseline: readonly (number | null)[],
): PairedRatio | undefined {
  const ratios: number[] = [];
  for (const [i, v] of values.entries()) {
    const b = baseline[i];
    if (v !== null && b !== null && b !== undefined && b > 0) ratios.push(v / b);
  }
  if (ratios.length === 0) return undefined;
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}
