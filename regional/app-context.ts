import type { RequestLimits } from "../protocol/limits.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import type { Logger } from "./log.ts";
import type { DeadlineVariables } from "./middleware/deadline.ts";
import type { Recorder } from "./recorder.ts";
import type { ModelRepository } from "./repository.ts";

/** Hono environment of the regional app: the per-request clock. */
export type RegionalEnv = { Variables: DeadlineVariables };

/** What the routes are built from. */
export interface AppDeps {
  region: string;
  repository: ModelRepository;
  recorder: Recorder;
  provider: ExecutionProvider;
  /** Id of the key model files must be signed with; undefined: unsigned models are served. */
  modelSigningKey: string | undefined;
  /** The exposition text `/metrics` answers (in a cluster worker: every worker's, aggregated). */
  metricsText(): Promise<string>;
  metricsContentType: string;
  /** True from SIGTERM on: readiness fails, answers close their connections. */
  draining(): boolean;
  log: Logger;
  limits: RequestLimits;
  /** Milliseconds each inference request waits first (simulated network distance). */
  delayMs: number;
  sharedSecret?: string;
  adminToken?: string;
}
