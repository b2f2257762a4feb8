import { readFileSync } from "node:fs";
import { type HeldoutSet, heldoutPath } from "../../protocol/heldout.ts";
import { type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";

export const MODELS_DIR = new URL("../../models/", import.meta.url).pathname;

export function modelConfig(name: string, dir = MODELS_DIR): ModelConfig {
  return parseModelConfig(JSON.parse(readFileSync(`${dir}${name}/config.json`, "utf8")), `${name}/config.json`);
}

export function modelBytes(name: string, version = modelConfig(name).version): Uint8Array {
  return readFileSync(`${MODELS_DIR}${name}/${version}/model.onnx`);
}

/** The held-out fixture of a model's served version (`models/<name>/<version>/heldout.json`). */
export function heldoutOf(name: string, dir = MODELS_DIR): HeldoutSet {
  return JSON.parse(readFileSync(`${dir}${heldoutPath(modelConfig(name, dir))}`, "utf8"));
}

/** The committed held-out rows of `digits`. */
export const heldout: HeldoutSet = heldoutOf("digits");

/** All held-out inputs of a fixture as one `[N, width]` float32 matrix. */
export function heldoutMatrix(set: HeldoutSet = heldout): Float32Array {
  return Float32Array.from(set.rows.flatMap((r) => r.input));
}
