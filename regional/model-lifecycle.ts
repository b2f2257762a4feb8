import { Conflict, ModelNotReady, NotFound, NotReady } from "../protocol/errors.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import type { Logger } from "./log.ts";
import {
  discovered,
  type IndexEntry,
  indexRows,
  type LifeEvent,
  lifecycleView,
  lifeStep,
  loadWanted,
  type ModelEntry,
  servingVersion,
} from "./model-life.ts";
import type { Lease, ModelVersion } from "./model-version.ts";
import type { ModelLifecycleView } from "./readiness-policy.ts";
import { whyNotServing } from "./readiness-policy.ts";
import type { Recorder } from "./recorder.ts";
import type { RetryBackoff } from "./retry-backoff.ts";
import { type Checked, LoadFailed, type VersionLoader } from "./version-loader.ts";

/** What a successful load did and checked. */
export interface LoadReport {
  name: string;
  version: string;
  state: "READY";
  /** The version it replaced, if any. */
  previous: string | null;
  provider: ExecutionProvider;
  sha256: string;
  warmupMs: number;
  fixture: { rows: number; accuracy: number; required: number };
}

/**
 * Why a load runs, as `edgecascade_model_load_duration_seconds` labels it: `policy` (at start and by readiness,
 * for the models the load policy keeps loaded), `demand` (a request for a model not loaded), `control` (the
 * model-load API, SIGHUP, a rollout's candidate), `registry` (the served version the model registry names; it pins
 * nothing: a model loaded on demand stays evictable).
 */
export type LoadTrigger = "policy" | "demand" | "control" | "registry";

/** What one model's lifecycle needs of the repository it belongs to. */
export interface LifecycleContext {
  loader: VersionLoader;
  recorder: Recorder;
  log: Logger;
  provider: ExecutionProvider;
  retryBackoff: RetryBackoff;
  /** Whether the pool is shutting down: no load starts then. */
  closed(): boolean;
  /** A load ended, well or not: it may have settled the last wanted model (the repository's first readiness). */
  loadEnded(): void;
}

/**
 * One model's lifecycle (Triton's ModelLifeCycle), the I/O around its state (model-life.ts): one operation
 * at a time (identical concurrent loads share one attempt), each version's load (version-loader.ts), the
 * swap, a rollout's candidate, retirement behind leases; each change a `lifeStep` whose effects (ready gauges,
 * retirements) are carried out here.
 */
export class ModelLifecycle {
  readonly name: string;
  /**
   * The load policy keeps it loaded (`all`, `--pinned-models`, an explicit load): readiness waits for it and
   * loads it, and it is never evicted. Otherwise it loads on demand and may be evicted.
   */
  pinned = true;
  /** When a request last asked for it (`performance.now()`): the memory budget evicts the least recent first. */
  lastUsed = 0;
  #entry: ModelEntry<ModelVersion> = discovered();
  /** The latest load asked for, so that identical concurrent loads share it. `version` undefined: the config's. */
  #pendingLoad?: { version: string | undefined; promise: Promise<LoadReport> };
  /** This model's operations, one after another. */
  #tail: Promise<void> = Promise.resolve();
  readonly #context: LifecycleContext;

  constructor(name: string, context: LifecycleContext) {
    this.name = name;
    this.#context = context;
  }

  /** What the readiness policies read of the state. */
  view(): ModelLifecycleView {
    return lifecycleView(this.#entry.life, this.pinned);
  }

  /** The repository index's rows of this model. */
  index(): IndexEntry[] {
    return indexRows(this.name, this.#entry, (v) => v.version, this.pinned);
  }

  /** Whether a version serves now (a request can lease it at once). */
  get serves(): boolean {
    return servingVersion(this.#entry.life) !== undefined;
  }

  /** The memory its versions are counted as until released: serving, a rollout's candidate, those retiring. */
  residentBytes(): number {
    const { serving, candidate } = this.versions();
    let bytes = (serving?.bytes ?? 0) + (candidate?.bytes ?? 0);
    for (const old of this.#entry.retiring) bytes += old.bytes;
    return bytes;
  }

  /**
   * What evicting it would free now, when it may be evicted: a version serving without a rollout's candidate,
   * not pinned, no operation of its own running or queued. Undefined otherwise.
   */
  evictableBytes(): number | undefined {
    const { life } = this.#entry;
    if (this.pinned || life.state !== "serving" || life.candidate || this.#busy > 0) return undefined;
    return life.serving.bytes;
  }

  /**
   * Evict the serving version to make room within the memory budget (`why` says for what): it answers no new
   * request, and its session is released once the requests holding it are answered (the promise). The model
   * stays available and loads again on its next request.
   */
  evict(why: string): Promise<void> {
    const version = servingVersion(this.#entry.life);
    const idleMs = Math.round(performance.now() - this.lastUsed);
    this.#step({ type: "evicted" });
    this.#context.recorder.modelEvicted(this.name);
    this.#context.log("info", "model evicted", {
      model: this.name,
      version: version?.version ?? null,
      reason: `least recently used (idle ${idleMs} ms); ${why}`,
      bytes: version?.bytes ?? 0,
    });
    return version ? version.retire() : Promise.resolve();
  }

  /** The serving version and the rollout's candidate, if any. */
  versions(): { serving?: ModelVersion; candidate?: ModelVersion } {
    const { life } = this.#entry;
    const serving = servingVersion(life);
    const candidate = life.state === "serving" ? life.candidate?.version : undefined;
    return { ...(serving ? { serving } : {}), ...(candidate ? { candidate } : {}) };
  }

  /**
   * A lease on the serving version (or exactly `version`, the candidate's while it answers clients): 404 for a
   * version not served, 503 while the model is not loaded.
   */
  acquire(version?: string): Lease {
    const { life } = this.#entry;
    const serving = servingVersion(life);
    if (!serving) throw new ModelNotReady(`model "${this.name}" is not ready: ${whyNotServing(this.view())}`, 1);
    if (version === undefined || version === serving.version) return serving.lease();
    const candidate = life.state === "serving" && life.candidate?.serves ? life.candidate.version : undefined;
    if (candidate && version === candidate.version) return candidate.lease();
    const served = candidate
      ? `versions ${serving.version} and ${candidate.version} are`
      : `version ${serving.version} is`;
    throw new NotFound(`model "${this.name}" version ${version} is not served; ${served}`);
  }

  /** Load `version` (default: the config's) and swap it in; identical concurrent loads share one attempt. */
  load(version?: string, trigger: LoadTrigger = "control"): Promise<LoadReport> {
    this.#refuseWhileClosed();
    this.#refuseDuringRollout();
    if (this.#pendingLoad && this.#pendingLoad.version === version) return this.#pendingLoad.promise;
    const promise = this.#serially(() => this.#loadNow(version, trigger));
    this.#pendingLoad = { version, promise };
    const clear = () => {
      if (this.#pendingLoad?.promise === promise) this.#pendingLoad = undefined;
    };
    promise.then(clear, clear);
    return promise;
  }

  /** Load and check `version` beside the serving version as a rollout's candidate; 409 when nothing serves. */
  loadCandidate(version: string): Promise<LoadReport> {
    this.#refuseWhileClosed();
    return this.#serially(async () => {
      const serving = servingVersion(this.#entry.life);
      if (this.#entry.life.state !== "serving" || serving === undefined) {
        throw new Conflict(`model "${this.name}" does not serve: a rollout's candidate loads beside a serving version`);
      }
      const candidate = this.#context.loader.build(await this.#check(version));
      this.#step({ type: "candidate-loaded", version: candidate });
      this.#context.recorder.modelLoad(this.name, "success");
      const report = this.#report(candidate, serving.version);
      this.#context.log("info", "rollout candidate loaded", { ...report });
      return report;
    });
  }

  /** Whether the candidate answers clients (a canary above 0%), so that requests may pin it. */
  candidateServes(serves: boolean): void {
    this.#step({ type: "candidate-serves", serves });
  }

  /** The candidate becomes the serving version (the rollout's promotion); the old one finishes its requests. */
  promoteCandidate(): Promise<void> {
    return this.#serially(async () => {
      const { candidate } = this.versions();
      if (!candidate) return;
      this.#step({ type: "candidate-promoted" });
      this.#context.log("info", "rollout candidate promoted", { model: this.name, version: candidate.version });
    });
  }

  /** Retire the candidate (a rollback); requests holding it finish first. */
  dropCandidate(): Promise<void> {
    return this.#serially(async () => this.#step({ type: "candidate-dropped" }));
  }

  /** Stop serving (and drop a rollout's candidate); a load running now discards its version. */
  unload(): Promise<void> {
    this.#step({ type: "unload-requested" });
    return this.#serially(async () => {
      const old = servingVersion(this.#entry.life);
      this.#step({ type: "unloaded" });
      if (old)
        this.#context.log("info", "model unloaded", { model: this.name, version: old.version, inFlight: old.leases });
    });
  }

  /** The pool's shutdown: every operation ends, every version retires; resolves once their sessions are released. */
  async close(): Promise<void> {
    this.#step({ type: "unload-requested" });
    await this.#tail;
    this.#step({ type: "unloaded" });
    await Promise.all([...this.#entry.retiring].map((version) => version.retire()));
  }

  /** Apply a lifecycle event: the next state, then its effects (ready gauges, retirements behind leases). */
  #step(event: LifeEvent<ModelVersion>): void {
    const { entry, effects } = lifeStep(this.#entry, event);
    this.#entry = entry;
    for (const effect of effects) {
      // Each version instance has its own ready cell (metrics.ts), so a reload of the same version sets the
      // old instance's to 0 and the new one's to 1, and the series says 1.
      effect.version.recorder.ready(effect.type === "ready");
      if (effect.type === "retire") {
        const old = effect.version;
        const fields = { model: this.name, version: old.version };
        // Released or not, the version is gone from the state: a failed release is logged and counted, never thrown.
        old.retire().then(
          () => {
            this.#step({ type: "drained", version: old });
            this.#context.log("info", "model version released", fields);
          },
          (err: Error) => {
            this.#step({ type: "drained", version: old });
            this.#context.recorder.backgroundFailure("release", this.name, old.version);
            this.#context.log("error", "model version release failed", { ...fields, reason: err.message });
          },
        );
      }
    }
  }

  #refuseWhileClosed(): void {
    if (this.#context.closed()) throw new NotReady(`model "${this.name}" cannot be loaded: the pool is shutting down`);
  }

  #refuseDuringRollout(): void {
    const { candidate } = this.versions();
    if (candidate) {
      throw new Conflict(
        `model "${this.name}" is in a rollout (candidate version ${candidate.version}); promote it or roll it back first`,
      );
    }
  }

  /** Operations of this model running or queued: while any is, the memory budget does not evict it. */
  #busy = 0;

  #serially<T>(op: () => Promise<T>): Promise<T> {
    this.#busy++;
    const result = this.#tail.then(op);
    this.#tail = result.then(
      () => {
        this.#busy--;
      },
      () => {
        this.#busy--;
      },
    );
    return result;
  }

  async #loadNow(requested: string | undefined, trigger: LoadTrigger): Promise<LoadReport> {
    // What an operation queued before this one did meanwhile: the same refusals as at the call.
    this.#refuseWhileClosed();
    this.#refuseDuringRollout();
    const started = performance.now();
    const previous = servingVersion(this.#entry.life);
    this.#step({ type: "load-started", version: requested });
    let checked: Checked;
    try {
      checked = await this.#check(requested);
    } catch (err) {
      this.#context.loadEnded();
      throw err;
    }
    if (!loadWanted(this.#entry.life)) {
      // Unloaded, or the pool began shutting down, while this version was checked: swapped in, its session
      // would never be released.
      await checked.session.release();
      this.#step({ type: "load-discarded" });
      const reason = this.#context.closed() ? "the pool is shutting down" : "the model was unloaded meanwhile";
      this.#context.log("info", "model load discarded", { model: this.name, version: checked.version, reason });
      throw new LoadFailed(`loading model "${this.name}" version ${checked.version} was discarded: ${reason}`);
    }
    const version = this.#context.loader.build(checked);
    this.#step({ type: "loaded", version });
    this.#context.recorder.modelLoad(this.name, "success");
    const loadMs = performance.now() - started;
    this.#context.recorder.modelLoadTime(trigger, loadMs / 1000);
    const report = this.#report(version, previous?.version ?? null);
    this.#context.log("info", "model version serving", { ...report, trigger, loadMs, bytes: version.bytes });
    this.#context.loadEnded();
    return report;
  }

  #report(version: ModelVersion, previous: string | null): LoadReport {
    return {
      name: version.name,
      version: version.version,
      state: "READY",
      previous,
      provider: this.#context.provider,
      ...version.checks,
    };
  }

  /**
   * Read the config and verify the version (version-loader.ts). On failure the failure is logged, counted and,
   * for a running load, stepped into the state (its reason and backoff); `LoadFailed` says what keeps serving.
   */
  async #check(requested: string | undefined): Promise<Checked> {
    const { loader, recorder, log, retryBackoff } = this.#context;
    let version = requested;
    try {
      const config = await loader.config(this.name);
      version = requested ?? config.version;
      return await loader.check(config, version);
    } catch (err) {
      const reason = (err as Error).message;
      if (this.#entry.life.state === "loading") {
        this.#step({ type: "load-failed", reason, nowMs: performance.now(), backoff: retryBackoff });
      }
      recorder.modelLoad(this.name, "failure");
      const serving = servingVersion(this.#entry.life)?.version;
      log("warn", "model load failed", {
        model: this.name,
        version: version ?? null,
        reason,
        serving: serving ?? null,
      });
      const keeps = serving ? `version ${serving} keeps serving` : "the model is not served";
      throw new LoadFailed(
        `loading model "${this.name}"${version ? ` version ${version}` : ""} failed: ${reason}; ${keeps}`,
      );
    }
  }
}
