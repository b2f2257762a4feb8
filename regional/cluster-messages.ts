import type { MetricsJson } from "./metrics.ts";
import type { ControlOp, Settled } from "./model-control.ts";
import type { ModelStatistics } from "./model-stats.ts";

/** Messages between the cluster primary (cluster-primary.ts) and its workers (cluster.ts `workerChannel`). */
export type Message =
  /** A worker listens; `slot` is the one it was forked into (its place in the pod, kept by its replacement). */
  | { type: "edgecascade:listening"; url: string; port: number; slot?: number }
  | { type: "edgecascade:ready" }
  | { type: "edgecascade:pool-ready"; ready: number; workers: number }
  | { type: "edgecascade:metrics-request"; id: number }
  | { type: "edgecascade:metrics-text"; id: number; text: string }
  | { type: "edgecascade:stats-request"; id: number }
  | { type: "edgecascade:stats"; id: number; stats: ModelStatistics[] }
  | { type: "edgecascade:metrics-collect"; id: number }
  | { type: "edgecascade:metrics-json"; id: number; metrics: MetricsJson; stats: ModelStatistics[] }
  | { type: "edgecascade:control-request"; id: number; op: ControlOp; args: unknown[] }
  | { type: "edgecascade:control-run"; id: number; op: ControlOp; args: unknown[] }
  | { type: "edgecascade:control-result"; id: number; result: Settled<unknown> }
  | { type: "edgecascade:control-results"; id: number; results: Settled<unknown>[] };

export const isMessage = (m: unknown): m is Message =>
  typeof m === "object" && m !== null && String((m as { type?: unknown }).type).startsWith("edgecascade:");

/** How long the primary waits for workers' metrics before answering with those that came. */
export const COLLECT_TIMEOUT_MS = 2_000;
