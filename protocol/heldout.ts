import { clearsThreshold } from "./cascade-rule.ts";
import type { ModelConfig } from "./model-config.ts";

/**
 * A model version's held-out fixture, `models/<name>/<version>/heldout.json`: rows no model was fitted or
 * calibrated on, with labels and each model's expected probabilities. Readiness checks, tests, the demo
 * page, the probes and the benchmarks read it. `npm run model -- import` writes it.
 */
export interface HeldoutRow {
  /** The row's features, as many as the model's input width. */
  input: number[];
  label: number;
  /** Expected probabilities per model name (onnxruntime-node's output when the fixture was written). */
  expected: Record<string, number[]>;
}

export interface HeldoutSet {
  description: string;
  split: string;
  /** Model name -> the version the expected outputs belong to. */
  models: Record<string, string>;
  rows: HeldoutRow[];
}

/** The fixture's file name inside a version directory. */
export const HELDOUT_FILE = "heldout.json";

/**
 * Where the fixture of a model version lives, relative to the model repository: in the full model's version
 * directory. An edge variant's is its calibration's (the full model version it was calibrated against).
 */
export function heldoutPath(config: ModelConfig, version = config.version): string {
  const against = config.versions[version]?.cascade?.against;
  return against ? `${against.model}/${against.version}/${HELDOUT_FILE}` : `${config.name}/${version}/${HELDOUT_FILE}`;
}

/** Index of the largest value. */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** The edge variant's expected top probability for a row. */
export function edgeConfidence(row: HeldoutRow, edgeModel: string): number {
  const probs = row.expected[edgeModel];
  if (!probs) throw new Error(`held-out row has no expected output for ${edgeModel}`);
  return Math.max(...probs);
}

/** Whether the edge variant answers a row on its own at `threshold`: the Worker's rule (cascade-rule.ts). */
export function edgeAnswers(row: HeldoutRow, threshold: number, edgeModel: string): boolean {
  return clearsThreshold(edgeConfidence(row, edgeModel), threshold);
}

/**
 * What a version did on its held-out rows, recorded in its config.json entry as `heldout` by the import (and by
 * `npm run model -- figures` for versions imported before): the baseline live traffic is compared with.
 */
export interface HeldoutFigures {
  /** Held-out rows. */
  rows: number;
  /** Rows per predicted class (the drift baseline, protocol/drift.ts). */
  classCounts: number[];
  /**
   * An edge variant's rows answered on their own at its calibrated threshold, and of those, how many its full
   * model labels the same: the agreement measured at import (`cascade.test.agreement`) as counts, so that the
   * live audit can compare with it within its sampling error (protocol/wilson.ts).
   */
  edgeAnswered?: number;
  edgeAgreeing?: number;
}

/**
 * A version's held-out figures from its fixture: `model`'s predicted classes, and for an edge variant (`edge`:
 * its calibrated threshold and the full model it stands for) the rows it answers and agrees on.
 */
export function heldoutFigures(
  set: HeldoutSet,
  model: string,
  classes: number,
  edge?: { threshold: number; fullModel: string },
): HeldoutFigures {
  const classCounts = new Array<number>(classes).fill(0);
  let edgeAnswered = 0;
  let edgeAgreeing = 0;
  for (const row of set.rows) {
    const probs = row.expected[model];
    if (!probs) throw new Error(`held-out row has no expected output for ${model}`);
    const label = argmax(probs);
    classCounts[label]! += 1;
    if (edge && edgeAnswers(row, edge.threshold, model)) {
      edgeAnswered++;
      const full = row.expected[edge.fullModel];
      if (!full) throw new Error(`held-out row has no expected output for ${edge.fullModel}`);
      if (argmax(full) === label) edgeAgreeing++;
    }
  }
  return { rows: set.rows.length, classCounts, ...(edge ? { edgeAnswered, edgeAgreeing } : {}) };
}
