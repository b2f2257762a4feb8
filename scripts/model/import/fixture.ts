import type { HeldoutSet } from "../../../protocol/heldout.ts";

/** The shortest decimal that reads back as the same float32 (so 17.99 stays 17.99, not 17.9899997711). */
export function shortestFloat32(x: number): number {
  const f = Math.fround(x);
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(f.toPrecision(digits));
    if (Math.fround(candidate) === f) return candidate;
  }
  return Number(f.toPrecision(9));
}

export interface FixtureModel {
  name: string;
  version: string;
  /** `[allRows, classes]` probabilities of every row of the data set. */
  probs: Float32Array;
}

/** The held-out fixture of an import: the held-out rows with their labels and each model's expected output. */
export function heldoutFixture(options: {
  features: Float32Array;
  width: number;
  labels: readonly number[];
  classes: number;
  rows: readonly number[];
  models: readonly FixtureModel[];
  split: string;
}): HeldoutSet {
  const { features, width, labels, classes, rows, models, split } = options;
  return {
    description:
      "Held-out rows (never used to fit or calibrate), their labels and each model's expected probabilities (onnxruntime-node)",
    split,
    models: Object.fromEntries(models.map((m) => [m.name, m.version])),
    rows: rows.map((r) => ({
      input: Array.from(features.subarray(r * width, (r + 1) * width), shortestFloat32),
      label: labels[r]!,
      expected: Object.fromEntries(
        models.map((m) => [m.name, Array.from(m.probs.subarray(r * classes, (r + 1) * classes), shortestFloat32)]),
      ),
    })),
  };
}
