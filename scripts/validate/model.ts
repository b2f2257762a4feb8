import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { HeldoutRow, HeldoutSet } from "../../protocol/heldout.ts";
import { calibrationOf, parseModelConfig, signatureOf } from "../../protocol/model-config.ts";

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

const read = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

/**
 * The model a validation run uses, from the model repository: its row width from `config.json`, its edge
 * variant's threshold, and its held-out fixture. The one place that knows where these live, so that per-model
 * fixtures (one per model in the repository) change only this function.
 */
export function validationModel(name = "digits", modelsDir = MODELS): ValidationModel {
  const config = parseModelConfig(read(`${modelsDir}/${name}/config.json`), `${name}/config.json`);
  const edgeModel = `${name}-edge`;
  const edge = parseModelConfig(read(`${modelsDir}/${edgeModel}/config.json`), `${edgeModel}/config.json`);
  const fixture = read(`${modelsDir}/${name}-heldout.json`) as HeldoutSet;
  const rows = fixture.rows.filter((r) => r.expected[name] && r.expected[edgeModel]);
  if (rows.length === 0)
    throw new Error(`${name}-heldout.json has no rows with expected outputs of ${name} and ${edgeModel}`);
  return { name, width: signatureOf(config).width, edgeModel, threshold: calibrationOf(edge).threshold, rows };
}
