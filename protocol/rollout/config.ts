import * as v from "valibot";
import { parseOrDescribe } from "../schema-message.ts";

/**
 * A rollout's parameters: its canary steps and the sequential tests that decide each step. They travel with
 * the rollout's state to every pool, so that any controller reads them from there (it keeps none).
 */
export interface RolloutConfig {
  /**
   * Percent of requests the candidate answers at each step, strictly increasing, ending at 100. A first step
   * of 0 is shadow only: the candidate runs on copies and answers no one. Default [1, 5, 25, 100].
   */
  steps: number[];
  /** Chance that a test rolls back a candidate as good as the stable version, per test and step. Default 0.001. */
  alpha: number;
  /** Chance that a test passes a candidate exactly as bad as its H1, per test and step. Default 0.01. */
  beta: number;
  /** Observations each test needs at a step before it may decide either way. Default 200. */
  minSamples: number;
  /** Seconds each step lasts at least. Default 0. */
  minStepSeconds: number;
  /**
   * Error rate: runs of the candidate (live and shadow) that failed. H0: at most the stable version's rate
   * plus `margin0`; H1: at least its rate plus `margin1`. Defaults 0.001 and 0.01.
   */
  errors: { margin0: number; margin1: number };
  /**
   * Latency, on the shadow runs: both versions run the same rows back to back, in alternating order, each
   * timed warm (after an untimed run of its own), so a machine's load falls on both alike. Each block of `block` such pairs (per pool process) pools its
   * 2 x `block` durations and takes the slowest of them above `quantile` (k = (1 - quantile) x 2 x block, at
   * least 1: the block's p95 and up); each of those k is a trial, an event when it is the candidate's. H0:
   * p = 0.5, the candidate's tail is the stable version's (ranks are exchangeable); H1: `p1`. The minimum
   * sample counts pairs. Defaults: quantile 0.95, block 20 (the 2 slowest of 40), p1 0.75.
   */
  latency: { quantile: number; block: number; p1: number };
  /** Label agreement: rows where the versions' labels differ. H0: at most `p0`; H1: at least `p1`. Defaults 0.01, 0.03. */
  agreement: { p0: number; p1: number };
  /**
   * Shadow work: the share of live requests copied for a comparison run of both versions, and how many
   * copies may wait (per model and pool process) before new ones are dropped. Defaults 1 and 16.
   */
  shadow: { sample: number; maxQueue: number };
}

export const DEFAULT_STEPS = [1, 5, 25, 100];

export const DEFAULT_ROLLOUT_CONFIG: RolloutConfig = {
  steps: DEFAULT_STEPS,
  alpha: 0.001,
  beta: 0.01,
  minSamples: 200,
  minStepSeconds: 0,
  errors: { margin0: 0.001, margin1: 0.01 },
  latency: { quantile: 0.95, block: 20, p1: 0.75 },
  agreement: { p0: 0.01, p1: 0.03 },
  shadow: { sample: 1, maxQueue: 16 },
};

const open01 = v.pipe(v.number(), v.gtValue(0, "must be in (0, 1)"), v.ltValue(1, "must be in (0, 1)"));
const closed01 = v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]"));

export const rolloutConfigSchema = v.strictObject({
  steps: v.pipe(
    v.array(v.pipe(v.number(), v.minValue(0, "must be 0 to 100"), v.maxValue(100, "must be 0 to 100"))),
    v.minLength(1, "must list at least one step"),
  ),
  alpha: open01,
  beta: open01,
  minSamples: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be 1 or more")),
  minStepSeconds: v.pipe(v.number(), v.minValue(0, "must be 0 or more")),
  errors: v.strictObject({ margin0: closed01, margin1: open01 }),
  latency: v.strictObject({
    quantile: open01,
    block: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(2, "must be 2 or more")),
    p1: open01,
  }),
  agreement: v.strictObject({ p0: open01, p1: open01 }),
  shadow: v.strictObject({
    sample: closed01,
    maxQueue: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0, "must be 0 or more")),
  }),
});

/** Why a config's parts do not fit together, or undefined. */
export function configProblem(config: RolloutConfig): string | undefined {
  const { steps } = config;
  if (steps.some((s, i) => i > 0 && s <= steps[i - 1]!))
    return `"steps" must increase strictly, got ${steps.join(",")}`;
  if (steps.at(-1) !== 100) return `"steps" must end at 100, got ${steps.join(",")}`;
  if (config.errors.margin1 <= config.errors.margin0) return '"errors.margin1" must be above "errors.margin0"';
  if (config.latency.p1 <= 0.5)
    return '"latency.p1" must be above 0.5 (H0: the slowest runs are either version\'s alike)';
  if (config.latency.block % 2 !== 0) return '"latency.block" must be even (as many pairs with each version first)';
  if (config.agreement.p1 <= config.agreement.p0) return '"agreement.p1" must be above "agreement.p0"';
  return undefined;
}

type Partial2<T> = { [K in keyof T]?: T[K] extends number[] ? T[K] : T[K] extends object ? Partial<T[K]> : T[K] };

/** The defaults with `overrides` on top (nested objects merged field by field), checked; the error names the field. */
export function rolloutConfig(overrides: Partial2<RolloutConfig> = {}): RolloutConfig {
  const d = DEFAULT_ROLLOUT_CONFIG;
  const merged = {
    ...d,
    ...overrides,
    errors: { ...d.errors, ...overrides.errors },
    latency: { ...d.latency, ...overrides.latency },
    agreement: { ...d.agreement, ...overrides.agreement },
    shadow: { ...d.shadow, ...overrides.shadow },
  };
  const parsed = parseOrDescribe(rolloutConfigSchema, merged);
  if (!parsed.ok) throw new Error(`rollout config: ${parsed.message}`);
  const problem = configProblem(parsed.value);
  if (problem) throw new Error(`rollout config: ${problem}`);
  return parsed.value;
}

export type RolloutConfigOverrides = Partial2<RolloutConfig>;
