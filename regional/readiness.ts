import type { AppDeps } from "./app-context.ts";

/** The pool's readiness, or why not. */
export type PoolReadiness =
  | { ready: true; failed?: { model: string; reason: string }[] }
  | { ready: false; reasons: string[] };

/**
 * Whether the pool serves, as `/v2/health/ready`, gRPC `ServerReady` and the gRPC health service report it:
 * not while draining; then every wanted model settled (serving, or failed: named with why, the others still
 * serve; repository.ts `ready`), and in a cluster every worker (readiness is the pod's).
 * Like every readiness check, it also starts the load of any wanted model that is neither serving nor loading.
 */
export function poolReadiness(deps: Pick<AppDeps, "draining" | "repository" | "poolNotReady">): PoolReadiness {
  const { repository } = deps;
  if (deps.draining()) return { ready: false, reasons: ["draining"] };
  repository.ensureLoading();
  const pool = deps.poolNotReady();
  if (repository.ready() && !pool) {
    const failed = repository.failedModels();
    return failed.length > 0 ? { ready: true, failed } : { ready: true };
  }
  return {
    ready: false,
    reasons: [...(repository.ready() ? [] : repository.notReadyReasons()), ...(pool ? [pool] : [])],
  };
}

/** Whether `name` (at `version`, if given) serves, starting its load if needed; 404 for an unknown model. */
export function modelReadiness(repository: AppDeps["repository"], name: string, version: string | undefined): boolean {
  repository.ensureLoading(name);
  return repository.modelReady(name, version);
}
