/**
 * One model's lifecycle, as Triton's ModelLifeCycle keeps it (the repository, repository.ts, is the I/O around
 * it): a state from a small union, stepped by `lifeStep`, a pure function of the state and an event (a load
 * started, a version checked, a load failed, an unload, a rollout's candidate, a retired version drained) that
 * gives the next state and the effects to carry out (a version's ready gauge, its retirement). Generic in the
 * version it holds (`ModelVersion` in the pool, plain values in tests).
 *
 * The legal states, and nothing else:
 * - `available`: the model's directory is known, no version is loaded or loading. `wanted` false after an
 *   operator's unload (nothing loads it until an explicit load); true before its first load, and after an
 *   eviction (`evicted`: the memory budget needed its room; a request loads it again).
 * - `loading`: a load is running; the version that served before keeps serving meanwhile (`serving`, a reload or
 *   hot swap), and the failures before it are kept (`after`) for the reason and the backoff. `wanted` false once
 *   an unload (or the pool's shutdown) came while it ran: the version it makes is discarded.
 * - `serving`: a version answers; a rollout's candidate may stand beside it, answering clients or not.
 * - `failed`: the last load failed and nothing serves: the reason, the failures in a row, when readiness may
 *   try again.
 * - `unloading`: unloaded, nothing serves, and versions still finish the requests that hold them (`retiring`);
 *   `available` (not wanted) once the last of them is released.
 * Apart from the state, `retiring` holds every version swapped out, dropped or unloaded whose requests are not
 * all answered yet (Triton's UNLOADING versions), whatever the state.
 */
import { type ModelLifecycleView, whyNotServing } from "./readiness-policy.ts";
import { type RetryBackoff, retryDelayMs } from "./retry-backoff.ts";

/** Loads failed in a row, the last one's reason, and when readiness may start another (`performance.now()` ms). */
export interface Failures {
  count: number;
  reason: string;
  retryAtMs: number;
}

/** A rollout's candidate beside the serving version; `serves`: it answers clients (a canary above 0%). */
export interface Candidate<V> {
  version: V;
  serves: boolean;
}

export type ModelLife<V> =
  | { state: "available"; wanted: boolean; evicted?: true }
  | { state: "loading"; version: string | undefined; wanted: boolean; serving?: V; after?: Failures }
  | { state: "serving"; serving: V; candidate?: Candidate<V> }
  | { state: "failed"; failures: Failures }
  | { state: "unloading" };

/** A model's state and the versions it is retiring. */
export interface ModelEntry<V> {
  life: ModelLife<V>;
  retiring: ReadonlySet<V>;
}

export type LifeEvent<V> =
  /** A load runs (the repository runs one at a time per model); `version` undefined: the config's. */
  | { type: "load-started"; version: string | undefined }
  /** The running load's version passed every check: it swaps in. */
  | { type: "loaded"; version: V }
  /** The running load's version passed its checks but nothing wants it any more: it was released, nothing changes. */
  | { type: "load-discarded" }
  | { type: "load-failed"; reason: string; nowMs: number; backoff: RetryBackoff }
  /** An unload (or the shutdown) was asked for: a load running now is for nobody. */
  | { type: "unload-requested" }
  /** The unload itself, in its turn: the serving version and the candidate retire. */
  | { type: "unloaded" }
  /** A rollout's candidate passed every check: it stands beside the serving version, not answering yet. */
  | { type: "candidate-loaded"; version: V }
  | { type: "candidate-serves"; serves: boolean }
  /** The candidate becomes the serving version (a promotion). */
  | { type: "candidate-promoted" }
  /** The candidate retires (a rollback). */
  | { type: "candidate-dropped" }
  /** A retiring version answered its last request and released its session. */
  | { type: "drained"; version: V }
  /**
   * The memory budget needs the serving version's room (least recently used): it retires, the model stays
   * available and loads again on its next request. Only a model serving without a rollout's candidate.
   */
  | { type: "evicted" };

export type LifeEffect<V> =
  /** The version now answers requests (its ready gauge 1). */
  | { type: "ready"; version: V }
  /** The version answers no new request (its ready gauge 0); it is released once its leases end. */
  | { type: "retire"; version: V };

/** A step that makes no sense in the state it arrived in (a bug in the caller, never a client's mistake). */
export class IllegalLifeStep extends Error {}

/** A model just discovered: not loaded, wanted. */
export function discovered<V>(): ModelEntry<V> {
  return { life: { state: "available", wanted: true }, retiring: new Set() };
}

/** The version that serves in this state, if any. */
export function servingVersion<V>(life: ModelLife<V>): V | undefined {
  return life.state === "serving" || life.state === "loading" ? life.serving : undefined;
}

/** Whether a load running in this state still has someone to serve (else its version is discarded). */
export function loadWanted<V>(life: ModelLife<V>): boolean {
  return life.state === "loading" && life.wanted;
}

/** The next state and effects for `event`. `entry` is not changed; an event its state cannot take throws. */
export function lifeStep<V>(
  entry: ModelEntry<V>,
  event: LifeEvent<V>,
): { entry: ModelEntry<V>; effects: LifeEffect<V>[] } {
  const { life } = entry;
  const retiring = new Set(entry.retiring);
  const effects: LifeEffect<V>[] = [];
  const retire = (version: V | undefined) => {
    if (version === undefined) return;
    retiring.add(version);
    effects.push({ type: "retire", version });
  };
  const next = (life: ModelLife<V>) => ({ entry: { life, retiring }, effects });
  const illegal = () => {
    throw new IllegalLifeStep(`a model ${describe(life)} cannot take "${event.type}"`);
  };

  switch (event.type) {
    case "load-started": {
      if (life.state === "loading") return illegal();
      if (life.state === "serving" && life.candidate) return illegal();
      const serving = servingVersion(life);
      const after = life.state === "failed" ? life.failures : undefined;
      return next({
        state: "loading",
        version: event.version,
        wanted: true,
        ...(serving === undefined ? {} : { serving }),
        ...(after ? { after } : {}),
      });
    }
    case "loaded": {
      if (!loadWanted(life)) return illegal();
      // The swap: one assignment. Requests that hold the old version keep it until they answer.
      retire(servingVersion(life));
      effects.push({ type: "ready", version: event.version });
      return next({ state: "serving", serving: event.version });
    }
    case "load-discarded":
    case "load-failed": {
      if (life.state !== "loading") return illegal();
      if (life.serving !== undefined) return next({ state: "serving", serving: life.serving });
      if (event.type === "load-discarded" || !life.wanted) {
        return next(retiring.size > 0 ? { state: "unloading" } : { state: "available", wanted: life.wanted });
      }
      const count = (life.after?.count ?? 0) + 1;
      return next({
        state: "failed",
        failures: { count, reason: event.reason, retryAtMs: event.nowMs + retryDelayMs(count, event.backoff) },
      });
    }
    case "unload-requested":
      return next(life.state === "loading" ? { ...life, wanted: false } : life);
    case "unloaded": {
      if (life.state === "loading") return illegal();
      if (life.state === "serving") {
        retire(life.candidate?.version);
        retire(life.serving);
      }
      return next(retiring.size > 0 ? { state: "unloading" } : { state: "available", wanted: false });
    }
    case "candidate-loaded": {
      if (life.state !== "serving") return illegal();
      retire(life.candidate?.version);
      effects.push({ type: "ready", version: event.version });
      return next({ ...life, candidate: { version: event.version, serves: false } });
    }
    case "candidate-serves": {
      if (life.state !== "serving" || !life.candidate) return next(life);
      return next({ ...life, candidate: { ...life.candidate, serves: event.serves } });
    }
    case "candidate-promoted": {
      if (life.state !== "serving" || !life.candidate) return next(life);
      retire(life.serving);
      return next({ state: "serving", serving: life.candidate.version });
    }
    case "candidate-dropped": {
      if (life.state !== "serving" || !life.candidate) return next(life);
      retire(life.candidate.version);
      return next({ state: "serving", serving: life.serving });
    }
    case "evicted": {
      if (life.state !== "serving" || life.candidate) return illegal();
      retire(life.serving);
      return next({ state: "available", wanted: true, evicted: true });
    }
    case "drained": {
      retiring.delete(event.version);
      return next(life.state === "unloading" && retiring.size === 0 ? { state: "available", wanted: false } : life);
    }
  }
}

function describe<V>(life: ModelLife<V>): string {
  if (life.state === "serving" && life.candidate) return "serving with a rollout's candidate";
  if (life.state !== "available") return life.state;
  return `available (${life.evicted ? "evicted" : life.wanted ? "wanted" : "unloaded"})`;
}

/**
 * What the readiness policies (readiness-policy.ts) read of a model's state. `pinned`: the load policy keeps
 * the model loaded (`all`, a pinned model, an explicit load), so readiness waits for it and starts its loads;
 * otherwise it loads on demand.
 */
export function lifecycleView<V>(life: ModelLife<V>, pinned = true): ModelLifecycleView {
  const none = { failures: 0, retryAtMs: 0, evicted: false };
  switch (life.state) {
    case "available":
      return {
        ...none,
        wanted: life.wanted && pinned,
        unloaded: !life.wanted,
        evicted: life.evicted === true,
        serving: false,
        loading: false,
      };
    case "unloading":
      return { ...none, wanted: false, unloaded: true, serving: false, loading: false };
    case "serving":
      return { ...none, wanted: pinned, unloaded: false, serving: true, loading: false };
    case "loading": {
      const { after } = life;
      return {
        ...none,
        wanted: life.wanted && pinned,
        unloaded: !life.wanted,
        serving: life.serving !== undefined,
        loading: true,
        ...(after ? { lastError: after.reason, failures: after.count } : {}),
      };
    }
    case "failed": {
      const { reason, count, retryAtMs } = life.failures;
      return {
        ...none,
        wanted: pinned,
        unloaded: false,
        serving: false,
        loading: false,
        lastError: reason,
        failures: count,
        retryAtMs,
      };
    }
  }
}

/** Triton's model states, as the repository index reports them. */
export type ModelState = "READY" | "LOADING" | "UNLOADING" | "UNAVAILABLE";

export interface IndexEntry {
  name: string;
  version?: string;
  state: ModelState;
  reason?: string;
  /** Set on a rollout's candidate version, loaded beside the serving one. */
  candidate?: true;
}

/**
 * A model's rows of the repository index: each version it serves, loads or retires, or why none serves (a model
 * available but not loaded is `UNAVAILABLE` with the reason, as Triton lists the models of its repository).
 */
export function indexRows<V>(
  name: string,
  entry: ModelEntry<V>,
  versionOf: (version: V) => string,
  pinned = true,
): IndexEntry[] {
  const { life } = entry;
  const rows: IndexEntry[] = [];
  const serving = servingVersion(life);
  if (serving !== undefined) rows.push({ name, version: versionOf(serving), state: "READY" });
  if (life.state === "serving" && life.candidate) {
    rows.push({ name, version: versionOf(life.candidate.version), state: "READY", candidate: true });
  }
  for (const old of entry.retiring) rows.push({ name, version: versionOf(old), state: "UNLOADING" });
  if (life.state === "loading") {
    rows.push({ name, ...(life.version === undefined ? {} : { version: life.version }), state: "LOADING" });
  } else if (serving === undefined) {
    rows.push({ name, state: "UNAVAILABLE", reason: whyNotServing(lifecycleView(life, pinned)) });
  }
  return rows;
}
