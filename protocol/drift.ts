/**
 * Drift of a model's answers: the classes it predicts on live traffic against the classes it predicted on its
 * held-out rows at import (`heldout.predicted` in its config.json), as the population stability index
 * PSI = Σ (live − held-out) · ln(live / held-out) over the classes. Both tiers use these definitions: the pools'
 * recording rule computes the same sum in PromQL (deploy/prometheus/cascade.rules.yml), the edge's /status here.
 */

/** A share below this counts as this (an unseen class would make ln(0)); PromQL's clamp_min uses the same. */
export const PSI_FLOOR = 1e-4;
/** PSI above this is a shift worth a look (the usual reading: < 0.1 none, 0.1-0.25 moderate, > 0.25 large). */
export const PSI_ALERT = 0.25;
/**
 * Fewer predictions than this in a window and no drift is claimed: sampling noise alone gives PSI of about
 * (classes − 1) / n on an unchanged mix (0.09 for 10 classes at 100).
 */
export const PSI_MIN_PREDICTIONS = 100;

/** Upper bounds of the confidence (top probability) histogram both tiers keep. */
export const CONFIDENCE_BUCKETS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1] as const;

/** Counts per class as shares of their sum (all zero without any count). */
export function shares(counts: readonly number[]): number[] {
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.map((c) => (total > 0 ? c / total : 0));
}

/** PSI of live shares against the held-out ones (same classes, same order). */
export function psi(live: readonly number[], heldout: readonly number[]): number {
  if (live.length !== heldout.length) {
    throw new RangeError(`${live.length} live classes against ${heldout.length} held-out ones`);
  }
  let sum = 0;
  for (let c = 0; c < live.length; c++) {
    const a = Math.max(live[c]!, PSI_FLOOR);
    const e = Math.max(heldout[c]!, PSI_FLOOR);
    sum += (a - e) * Math.log(a / e);
  }
  return sum;
}

export interface DriftFigures {
  predictions: number;
  /** Live shares per class. */
  predicted: number[];
  /** PSI against the held-out shares; null below `PSI_MIN_PREDICTIONS` predictions. */
  psi: number | null;
  /** Whether PSI is over `PSI_ALERT` (false while it is null). */
  drifted: boolean;
}

/** The drift of `counts` (live predictions per class) from the held-out shares. */
export function driftOf(counts: readonly number[], heldout: readonly number[]): DriftFigures {
  const predictions = counts.reduce((a, b) => a + b, 0);
  const predicted = shares(counts);
  const score = predictions >= PSI_MIN_PREDICTIONS ? psi(predicted, heldout) : null;
  return { predictions, predicted, psi: score, drifted: score !== null && score > PSI_ALERT };
}

/** Index of the confidence bucket a top probability falls in (the first bound at or above it). */
export function confidenceBucket(confidence: number): number {
  let i = 0;
  while (i < CONFIDENCE_BUCKETS.length - 1 && confidence > CONFIDENCE_BUCKETS[i]!) i++;
  return i;
}
