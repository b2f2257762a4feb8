import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type HeldoutSet, heldoutPath } from "../../protocol/heldout.ts";
import { calibrationOf, type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";
import type { MixEdge } from "./mix.ts";

/** What probes and benchmarks send for a model: its name, held-out fixture, and edge variant's threshold. */
export interface ProbeTarget {
  model: string;
  config: ModelConfig;
  heldout: HeldoutSet;
  edge: MixEdge | undefined;
}

function readConfig(modelsDir: string, name: string): ModelConfig | undefined {
  let text: string;
  try {
    text = readFileSync(join(modelsDir, name, "config.json"), "utf8");
  } catch {
    return undefined;
  }
  return parseModelConfig(JSON.parse(text), `${name}/config.json`);
}

/**
 * A model of a repository and its served version's fixture. Its edge variant is the config that stands for
 * it (by convention `<name>-edge`); the fixture holds both models' expected outputs under their names.
 */
export function probeTarget(modelsDir: string, model: string): ProbeTarget {
  const config = readConfig(modelsDir, model);
  if (!config || config.standsFor) {
    throw new Error(`--model ${model}: not a model of ${modelsDir} (a <name>/config.json that stands for no other)`);
  }
  const edgeConfig = readConfig(modelsDir, `${model}-edge`);
  const edge =
    edgeConfig?.standsFor === model
      ? { model: edgeConfig.name, threshold: calibrationOf(edgeConfig).threshold }
      : undefined;
  const heldout = JSON.parse(readFileSync(join(modelsDir, heldoutPath(config)), "utf8")) as HeldoutSet;
  if (edge && !heldout.rows[0]?.expected[edge.model]) {
    throw new Error(`${heldoutPath(config)} has no expected outputs of ${edge.model}; import the model again`);
  }
  return { model, config, heldout, edge };
}
