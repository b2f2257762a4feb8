import type { ModelBudgets, ModelConfig } from "../../../protocol/model-config.ts";

/** Every budget the gates apply, after defaults. */
export type Budgets = Required<ModelBudgets>;

/**
 * Defaults for a full model (served by the pools). Latencies are one row through onnxruntime-node (a
 * request's own inference, not a batch), against a p95 target of 10 ms end to end; the energy figure is an
 * estimate (see `energyMj`).
 */
export const FULL_BUDGETS: Budgets = {
  /** 64 MiB: every pod loads every model, one session per worker. */
  maxBytes: 64 * 1024 * 1024,
  p50Ms: 1,
  p99Ms: 5,
  // A full model is never run in onnxruntime-web; these apply only to edge variants.
  webP50Ms: 1,
  webP99Ms: 5,
  accuracyTolerance: 0.01,
  minAgreement: 0.95,
  maxEnergyMj: 5,
  wattsPerCore: 5,
};

/** Defaults for an edge variant (`standsFor` set): it ships inside the Worker and runs on every edge request. */
export const EDGE_BUDGETS: Budgets = {
  ...FULL_BUDGETS,
  /** 1 MiB: the Worker bundle is ~14 MB of the 64 MiB Worker limit, almost all onnxruntime's wasm; every isolate holds every variant. */
  maxBytes: 1024 * 1024,
  p50Ms: 0.5,
  p99Ms: 2,
  webP50Ms: 1,
  webP99Ms: 5,
  maxEnergyMj: 2,
};

/** The budgets for a model: its role's defaults, overridden by the config's `budgets`. */
export function budgetsFor(config: ModelConfig): Budgets {
  return { ...(config.standsFor ? EDGE_BUDGETS : FULL_BUDGETS), ...config.budgets };
}

/**
 * Energy per prediction, in millijoules: CPU time per row (seconds) times the power one busy core draws
 * (watts). An estimate: `wattsPerCore` is a figure for the hardware (default 5 W: a 300-400 W server CPU
 * spread over its 56-96 cores), not a measurement, and the CPU time is that of one row at a time in this
 * process, not a whole server's draw.
 */
export function energyMj(cpuUsPerRow: number, wattsPerCore: number): number {
  return (cpuUsPerRow / 1e6) * wattsPerCore * 1000;
}
