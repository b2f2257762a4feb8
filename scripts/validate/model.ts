import { fileURLToPath } from "node:url";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { modelIoOf } from "../../protocol/model-config.ts";
import { probeTarget } from "../../tools/probe/target.ts";

const MODELS = fileURLToPath(new URL("../../models/", import.meta.url));

/** What the validation runs need to know of the model they send traffic for. */
export interface ValidationModel {
  /** The logical model clients name (`--model`). */
  name: string;
  /** Values in one input row. */
  width: number;
  /** The edge variant standing in for it, whose expected outputs the fixture holds too. */
  edgeModel: string;
  /** The edge variant's calibrated cascade threshold. */
  threshold: number;
  /** Held-out rows, which no model was fitted or calibrated on: inputs, labels, both models' expected outputs. */
  rows: readonly HeldoutRow[];
}

/**
 * The model a validation run uses, from the model repository (as the probe reads it, `tools/probe/target.ts`):
 * its row width, its edge variant's threshold and its served version's held-out fixture. The one place the
 * validation scripts learn a model from. The runs measure the cascade, so the model needs an edge variant.
 */
export function validationModel(name = "digits", modelsDir = MODELS): ValidationModel {
  const target = probeTarget(modelsDir, name);
  if (!target.edge) throw new Error(`--model ${name}: it has no edge variant, and these runs measure the cascade`);
  return {
    name,
    width: modelIoOf(target.config).width,
    edgeModel: target.edge.model,
    threshold: target.edge.threshold,
    rows: target.heldout.rows,
  };
}
