import { shortestFloat32 } from "../../../protocol/float32-decimal.ts";
import type { HeldoutSet } from "../../../protocol/heldout.ts";

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
