/** Result of checking a candidate version's outputs on the held-out rows. */
export type FixtureVerdict = { ok: true; accuracy: number } | { ok: false; reason: string };

/** How far a row's probabilities may sum from 1 (float32 softmax rounding stays far below this). */
const SUM_TOLERANCE = 1e-3;
/** How far one probability may stray outside [0, 1]: tree ensembles sum float32 votes (10 x 0.1 = 1.0000001). */
const RANGE_TOLERANCE = 1e-5;

/**
 * Whether a version may serve, judged on the held-out rows' outputs: every value a finite probability,
 * every row summing to 1, and accuracy on the labels at least `minAccuracy`.
 */
export function checkFixtureOutputs(
  probs: ArrayLike<number>,
  labels: readonly number[],
  classes: number,
  minAccuracy: number,
): FixtureVerdict {
  const rows = labels.length;
  if (probs.length !== rows * classes) {
    return { ok: false, reason: `expected ${rows}x${classes} outputs on the fixture, got ${probs.length} values` };
  }
  let correct = 0;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    let best = 0;
    for (let c = 0; c < classes; c++) {
      const p = probs[r * classes + c]!;
      if (!Number.isFinite(p) || p < -RANGE_TOLERANCE || p > 1 + RANGE_TOLERANCE) {
        return { ok: false, reason: `fixture row ${r}: output ${c} is ${p}, not a probability` };
      }
      sum += p;
      if (p > probs[r * classes + best]!) best = c;
    }
    if (Math.abs(sum - 1) > SUM_TOLERANCE) {
      return { ok: false, reason: `fixture row ${r}: probabilities sum to ${sum.toFixed(6)}, not 1` };
    }
    if (best === labels[r]) correct++;
  }
  const accuracy = correct / rows;
  if (accuracy < minAccuracy) {
    return {
      ok: false,
      reason: `fixture accuracy ${accuracy.toFixed(4)} is below the required ${minAccuracy.toFixed(4)}`,
    };
  }
  return { ok: true, accuracy };
}
