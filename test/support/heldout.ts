import { readFileSync } from "node:fs";
import type { HeldoutSet } from "../../protocol/heldout.ts";
import { type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";

export const MODELS_DIR = new URL("../../models/", import.meta.url).pathname;

/** The committed held-out rows (models/digits-heldout.json). */
export const heldout: HeldoutSet = JSON.parse(readFileSync(`${MODELS_DIR}digits-heldout.json`, "utf8"));

export function modelConfig(name: string): ModelConfig {
  return parseModelConfig(JSON.parse(readFileSync(`${MODELS_DIR}${name}/config.json`, "utf8")), `${name}/config.json`);
}

export function modelBytes(name: string, version = modelConfig(name).version): Uint8Array {
  return readFileSync(`${MODELS_DIR}${name}/${version}/model.onnx`);
}

/** All held-out inputs as one `[N, 64]` float32 matrix. */
export function heldoutMatrix(): Float32Array {
  return Float32Array.from(heldout.rows.flatMap((r) => r.input));
}
