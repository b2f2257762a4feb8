import type { AppDeps } from "./app-context.ts";

/** The pool's readiness, or why not. */
export type PoolReadiness =
  | { ready: true; failed?: { model: string; reason: string }[]; models: ModelCounts }
  | { ready: false; reasons: string[]; models: ModelCounts };

/** This process's models: in the repository (less those unloaded) and serving now. */
export interface ModelCounts {
  available: number;
  loaded: number;
}

/**
 * Whether the pool serves, as `/v2/health/ready`, gRPC `ServerReady` and the gRPC health service report it:
 * not while draining; then every wanted model settled (serving, or failed: named with why, the others still
 * serve; repository.ts `ready`), and in a cluster every worker (readiness is the pod's).
 * Like every readiness check, it also starts the load of any wanted model that is neither serving nor loading.
 */
export function poolReadiness(deps: Pick<AppDeps, "draining" | "repository" | "poolNotReady">): PoolReadiness {
  const { repository } = deps;
  const { available, loaded } = repository.memory();
  const models = { available, loaded };
  if (deps.draining()) return { ready: false, reasons: ["draining"], models };
  repository.ensureLoading();
  const pool = deps.poolNotReady();
  if (repository.ready() && !pool) {
    const failed = repository.failedModels();
    return failed.length > 0 ? { ready: true, failed, models } : { ready: true, models };
  }
  return {
    ready: false,
    reasons: [...(repository.ready() ? [] : repository.notReadyReasons()), ...(pool ? [pool] : [])],
    models,
  };
}

/** Whether `name` (at `version`, if given) serves, starting its load if needed; 404 for an unknown model. */
export function modelReadiness(repository: AppDeps["repository"], name: string, version: string | undefined): boolean {
  repository.ensureLoading(name);
  return repository.modelReady(name, version);
}
