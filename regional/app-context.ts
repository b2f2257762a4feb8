import type { RequestLimits } from "../protocol/limits.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import type { Logger } from "./log.ts";
import type { Admitted, InferenceAdmission } from "./middleware/admit-in-time.ts";
import type { DeadlineVariables } from "./middleware/request-deadline.ts";
import type { ModelControl } from "./model-control.ts";
import type { ModelStatistics } from "./model-stats.ts";
import type { Peers } from "./peers/peers.ts";
import type { Recorder } from "./recorder.ts";
import type { ModelRepository } from "./repository.ts";
import type { Rollouts } from "./rollout/rollouts.ts";
import type { TenantScheduler } from "./tenants/tenant-scheduler.ts";
import type { RequestTrace, RequestTracing } from "./tracing/request-tracing.ts";

/** Hono environment of the regional app: the per-request clock, the request as admission admitted it, its trace. */
export type RegionalEnv = { Variables: DeadlineVariables & { admitted: Admitted; trace?: RequestTrace } };

/** What the routes are built from. */
export interface AppDeps {
  region: string;
  repository: ModelRepository;
  /** Canary routing and shadow hand-off of live requests (this process's rollouts). */
  rollouts: Rollouts;
  /** Model loads, unloads and rollout changes: in a cluster, relayed to every worker of the pool. */
  control: ModelControl;
  recorder: Recorder;
  provider: ExecutionProvider;
  /** Id of the key model files must be signed with; undefined: unsigned models are served. */
  modelSigningKey: string | undefined;
  /** The exposition text `/metrics` answers (in a cluster worker: every worker's, aggregated). */
  metricsText(): Promise<string>;
  /** Triton's statistics `/v2/models/stats` answers (in a cluster worker: every worker's, summed). */
  statistics(): Promise<ModelStatistics[]>;
  metricsContentType: string;
  /** True from SIGTERM on: readiness fails, answers close their connections. */
  draining(): boolean;
  /** Why the pool as a whole is not ready yet (a cluster's other workers still starting); undefined: it is. */
  poolNotReady(): string | undefined;
  log: Logger;
  limits: RequestLimits;
  /** The dynamic batcher's queue delay (`--max-queue-delay-us`), as `/v2/models/{m}/config` reports it. */
  maxQueueDelayUs: number;
  /** Milliseconds each inference request waits first (simulated network distance). */
  simulatedDelayMs: number;
  /** Admission by deadline, one per pool: the Hono routes and the fast path share it. */
  admission: InferenceAdmission;
  /** The pool's tenants (`--tenants`): flows, reservations, per-tenant counts; shared by admission and batchers. */
  tenants: TenantScheduler;
  /** Spans of inference requests (regional/tracing/): `TRACING_OFF` unless OTEL_* configure an exporter. */
  tracing: RequestTracing;
  sharedSecret?: string;
  adminToken?: string;
  /** `--model-placement hashed` in a pod of several workers: the worker owning each model (regional/peers/). */
  peers?: Peers;
}
