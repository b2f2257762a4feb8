/**
 * `models/digits-heldout.json`: the test split, which no model was fitted or calibrated on, with labels and
 * each model's expected probabilities. Tests, the demo page, the probes and the regional pool's pre-swap
 * check read it.
 */
export interface HeldoutRow {
  /** 64 pixel values, 0-16. */
  input: number[];
  label: number;
  /** Expected probabilities per model name (float32 reference computed by the build script). */
  expected: Record<string, number[]>;
}

export interface HeldoutSet {
  description: string;
  split: string;
  /** Model name -> the version the expected outputs belong to. */
  models: Record<string, string>;
  rows: HeldoutRow[];
}

/** Index of the largest value. */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** The edge model's expected top probability for a row. */
export function edgeConfidence(row: HeldoutRow, edgeModel = "digits-edge"): number {
  const probs = row.expected[edgeModel];
  if (!probs) throw new Error(`held-out row has no expected output for ${edgeModel}`);
  return Math.max(...probs);
}

/** Whether the edge model answers a row on its own at `threshold` (its top probability clears it). */
export function edgeAnswers(row: HeldoutRow, threshold: number, edgeModel = "digits-edge"): boolean {
  return edgeConfidence(row, edgeModel) >= threshold;
}
