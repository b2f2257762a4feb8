import bundled from "edgecascade-models";
import { parseModelConfig } from "../../protocol/model-config.ts";
import { EdgeModel } from "../inference/edge-model.ts";
import { createOrtRunner } from "../inference/ort-workerd.ts";
import type { ModelSource } from "./served-model.ts";

/**
 * The models this Worker serves, exactly those of the repository it was built from (see
 * scripts/stack/edge-models.ts): each logical model's config and, when it has one, its edge variant, checked
 * against the config's SHA-256 when it first loads. Built once per isolate, at module load.
 */
export const BUNDLED_MODELS: readonly ModelSource[] = bundled.map(({ config, edge, samples }) => {
  const full = parseModelConfig(config, "bundled config.json");
  return {
    config: full,
    edge: edge
      ? new EdgeModel({
          config: parseModelConfig(edge.config, `bundled ${full.name} edge variant config.json`),
          bytes: edge.bytes,
          createRunner: createOrtRunner,
        })
      : undefined,
    samples,
  };
});
