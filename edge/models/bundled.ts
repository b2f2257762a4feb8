import bundled from "edgecascade-models";
import { parseModelConfig } from "../../protocol/model-config.ts";
import type { ModelPublicKey } from "../../protocol/model-signature.ts";
import { EdgeVariant } from "../inference/edge-variant.ts";
import { createOrtSession } from "../inference/ort-workerd.ts";
import type { SessionPool } from "../inference/session-pool.ts";
import type { ModelSource } from "./served-model.ts";

/** The bundled configs, parsed once per isolate at module load. */
const PARSED = bundled.map(({ config, edge, samples }) => {
  const full = parseModelConfig(config, "bundled config.json");
  const edgeConfig = edge ? parseModelConfig(edge.config, `bundled ${full.name} edge variant config.json`) : undefined;
  const rows = () => JSON.parse(samples) as { input: number[]; label: number }[];
  return { full, edge: edge && edgeConfig ? { config: edgeConfig, bytes: edge.bytes } : undefined, samples: rows };
});

/** Names of the bundled logical models. */
export const BUNDLED_NAMES: readonly string[] = PARSED.map((m) => m.full.name);

/**
 * The models this Worker serves, exactly those of the repository it was built from (see
 * tools/edge-bundle/edge-models.ts): each logical model's config and, when it has one, its edge variant, its
 * session created on first use within `pool`'s budget from the bundled bytes (the source of a model's bytes: a
 * registry read on first use would be another), checked against the config's SHA-256 (and, given `publicKey`,
 * its signature) before every creation.
 */
export function bundledModels(pool: SessionPool, publicKey?: Promise<ModelPublicKey>): ModelSource[] {
  return PARSED.map(({ full, edge, samples }) => ({
    config: full,
    edge: edge ? new EdgeVariant({ ...edge, createSession: createOrtSession, publicKey, pool }) : undefined,
    samples,
  }));
}
