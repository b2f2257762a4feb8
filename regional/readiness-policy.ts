/**
 * The lifecycle's readiness policies, apart from the repository's entries: whether the pod is ready, why a
 * model does not serve, and whether a readiness check (or a request) may start another load.
 */

/** What these policies read of one model's lifecycle. */
export interface ModelLifecycleView {
  /**
   * Readiness waits for it and starts its loads: the load policy keeps it loaded (`all`, a pinned model, an
   * explicit load) and no operator unloaded it. False for a model loaded on demand.
   */
  wanted: boolean;
  /** An operator unloaded it (or the pool shuts down): nothing loads it until an explicit load. */
  unloaded: boolean;
  /** Its serving version was evicted to fit the memory budget; a request loads it again. */
  evicted: boolean;
  serving: boolean;
  loading: boolean;
  lastError?: string;
  /** Loads failed since the last success. */
  failures: number;
  /** `performance.now()` before which neither readiness checks nor requests start a load. */
  retryAtMs: number;
}

/**
 * The pod's readiness: every wanted model has settled (it serves, or its load failed) and at least one of them
 * serves; with no wanted model at all (every model loads on demand), once the repository holds a model that
 * was not unloaded. One model that cannot load never takes the others down: a pod held unready for it would
 * stop serving every model. Until each wanted model's first load has ended the pod is not ready.
 */
export function poolReady(models: Iterable<ModelLifecycleView>): boolean {
  const all = [...models];
  const wanted = all.filter((m) => m.wanted);
  if (!wanted.every((m) => m.serving || m.failures > 0)) return false;
  return wanted.length > 0 ? wanted.some((m) => m.serving) : all.some((m) => !m.unloaded);
}

/** Why a model does not serve, for readiness bodies, 503s and the index. */
export function whyNotServing(model: ModelLifecycleView): string {
  if (model.unloaded) return "unloaded";
  if (model.loading) return model.lastError ? `loading; the last attempt failed: ${model.lastError}` : "loading";
  if (model.lastError) return model.lastError;
  if (model.evicted) return "evicted to fit the memory budget (least recently used); loads on its next request";
  return model.wanted ? "not loaded" : "not loaded; loads on its first request";
}

/** Why a model's last load failed, when that is why it does not serve (the pod is ready without it). */
export function failedReason(model: ModelLifecycleView): string | undefined {
  if (model.unloaded || model.serving || model.failures === 0) return undefined;
  return model.lastError ?? whyNotServing(model);
}

/** Whether a readiness check starts a load: wanted, neither serving nor loading, and past its retry backoff. */
export function loadDue(model: ModelLifecycleView, nowMs: number): boolean {
  return model.wanted && !model.serving && !model.loading && nowMs >= model.retryAtMs;
}

/**
 * Whether a request for a model loading on demand waits for the load: when it may wait longer than loads have
 * taken lately (`expectedLoadMs`, the longest of the last few), or, before any load, when it has no deadline.
 * One that cannot answers 503 `model_not_ready` at once (the load goes on for the next requests), so that its
 * caller (the edge) answers from its own model or another region now, rather than when its deadline cuts the call
 * off (which the edge counts as the region being slow, and then stops forwarding to it).
 */
export function waitsForLoad(leftMs: number, expectedLoadMs: number | undefined): boolean {
  return expectedLoadMs === undefined ? leftMs === Number.POSITIVE_INFINITY : leftMs >= expectedLoadMs;
}

/**
 * Whether a request may start (or join) a load of a model that does not serve: not unloaded, and not within
 * the retry backoff of a failed load (a request then gets the failure's reason at once).
 */
export function demandLoadAllowed(model: ModelLifecycleView, nowMs: number): boolean {
  return !model.unloaded && !model.serving && (model.loading || nowMs >= model.retryAtMs);
}

/** Why a repository is not ready: one line per model it waits for that does not serve (`name: why`). */
export function notReadyLines(models: readonly { name: string; view: ModelLifecycleView }[]): string[] {
  if (models.length === 0) return ["no models found"];
  return models.flatMap(({ name, view }) => (view.wanted && !view.serving ? [`${name}: ${whyNotServing(view)}`] : []));
}

/** The models whose last load failed, with why, in name order (the pod is ready without them). */
export function failedModels(
  models: readonly { name: string; view: ModelLifecycleView }[],
): { model: string; reason: string }[] {
  return [...models]
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap(({ name, view }) => {
      const reason = failedReason(view);
      return reason === undefined ? [] : [{ model: name, reason }];
    });
}
