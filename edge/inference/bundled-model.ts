import modelBytes from "../../models/digits-edge/1/model.onnx";
import edgeConfig from "../../models/digits-edge/config.json";
import { parseModelConfig } from "../../protocol/model-config.ts";
import { EdgeModel } from "./edge-model.ts";
import { createOrtRunner } from "./ort-workerd.ts";

/**
 * The edge model bundled into the Worker: `models/digits-edge/config.json` and the file of its served
 * version. A bundler import needs a literal path, so the version directory is written here; the SHA-256
 * check at load time refuses the file if config.json has moved to another version without this import.
 */
export const bundledEdgeModel = new EdgeModel({
  config: parseModelConfig(edgeConfig, "models/digits-edge/config.json"),
  bytes: modelBytes,
  createRunner: createOrtRunner,
});
