import { readFile } from "node:fs/promises";
import { DEFAULT_STEPS, type RolloutConfigOverrides, rolloutConfig } from "../../protocol/rollout/config.ts";
import { UsageError } from "../cli/errors.ts";

/** The flags `configOf` reads, shared by `start` and `simulate` (`start` adds `--min-step-seconds`). */
export const CONFIG_FLAGS = {
  shadow: { type: "boolean", help: "begin with a 0% step: the candidate runs on copies only" },
  steps: {
    type: "list",
    placeholder: "P,P,...",
    defaultText: DEFAULT_STEPS.join(","),
    help: "percents of requests for the candidate, ending at 100",
  },
  config: {
    type: "string",
    placeholder: "FILE",
    help: "JSON of rollout parameters (docs/rollouts.md), under the flags",
  },
  alpha: { type: "number", placeholder: "X", help: "the sequential tests' false rollback rate" },
  beta: { type: "number", placeholder: "X", help: "the sequential tests' missed breach rate" },
  "min-samples": { type: "number", placeholder: "N", help: "the sequential tests' least evidence per step" },
} as const;

interface ConfigValues {
  shadow: boolean;
  steps: string[];
  config?: string | undefined;
  alpha?: number | undefined;
  beta?: number | undefined;
  "min-samples"?: number | undefined;
  "min-step-seconds"?: number | undefined;
}

export async function configOf(values: ConfigValues): Promise<ReturnType<typeof rolloutConfig>> {
  let overrides: RolloutConfigOverrides = {};
  if (typeof values.config === "string") {
    const text = await readFile(values.config, "utf8").catch((err: Error) => {
      throw new UsageError(`--config: cannot read ${values.config}: ${err.message}`);
    });
    try {
      overrides = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--config ${values.config}: invalid JSON: ${(err as Error).message}`);
    }
  }
  const steps = values.steps.length > 0 ? values.steps.map(Number) : (overrides.steps ?? DEFAULT_STEPS);
  const flags: RolloutConfigOverrides = {
    steps: values.shadow && steps[0] !== 0 ? [0, ...steps] : steps,
    ...(values.alpha !== undefined ? { alpha: values.alpha } : {}),
    ...(values.beta !== undefined ? { beta: values.beta } : {}),
    ...(values["min-samples"] !== undefined ? { minSamples: values["min-samples"] } : {}),
    ...(values["min-step-seconds"] !== undefined ? { minStepSeconds: values["min-step-seconds"] } : {}),
  };
  try {
    return rolloutConfig({ ...overrides, ...flags });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
