/**
 * The lifecycle's readiness policies, apart from the repository's entries: whether the pod is ready, why a
 * model does not serve, and whether a readiness check may start another load.
 */

/** What these policies read of one model's lifecycle. */
export interface ModelLifecycleView {
  /** False after an unload (or while the pool shuts down): readiness neither waits for it nor reloads it. */
  wanted: boolean;
  serving: boolean;
  loading: boolean;
  lastError?: string;
  /** Loads failed since the last success. */
  failures: number;
  /** `performance.now()` before which readiness checks start no load. */
  retryAtMs: number;
}

/**
 * The pod's readiness: at least one wanted model serves, and every other wanted model has settled (it serves,
 * or its load failed). One model that cannot load never takes the others down: a pod held unready for it
 * would stop serving every model. Until each model's first load has ended the pod is not ready.
 */
export function poolReady(models: Iterable<ModelLifecycleView>): boolean {
  const wanted = [...models].filter((m) => m.wanted);
  return wanted.some((m) => m.serving) && wanted.every((m) => m.serving || m.failures > 0);
}

/** Why a model does not serve, for readiness bodies, 503s and the index. */
export function whyNotServing(model: ModelLifecycleView): string {
  if (!model.wanted) return "unloaded";
  if (model.loading) return model.lastError ? `loading; the last attempt failed: ${model.lastError}` : "loading";
  return model.lastError ?? "not loaded";
}

/** Why a wanted model's last load failed, when that is why it does not serve (the pod is ready without it). */
export function failedReason(model: ModelLifecycleView): string | undefined {
  if (!model.wanted || model.serving || model.failures === 0) return undefined;
  return model.lastError ?? whyNotServing(model);
}

/** Whether a readiness check starts a load: wanted, neither serving nor loading, and past its retry backoff. */
export function loadDue(model: ModelLifecycleView, nowMs: number): boolean {
  return model.wanted && !model.serving && !model.loading && nowMs >= model.retryAtMs;
}
