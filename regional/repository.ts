import { NotFound } from "../protocol/errors.ts";
import { describeModel, type ModelConfig } from "../protocol/model-config.ts";
import type { ModelMetadata } from "../protocol/types.ts";
import type { Logger } from "./log.ts";
import { discoverModels, isModelDir } from "./model-discovery.ts";
import type { IndexEntry } from "./model-life.ts";
import { type LifecycleContext, type LoadReport, ModelLifecycle } from "./model-lifecycle.ts";
import type { Lease, ModelVersion } from "./model-version.ts";
import { failedReason, loadDue, poolReady, whyNotServing } from "./readiness-policy.ts";
import type { Recorder } from "./recorder.ts";
import { DEFAULT_RETRY_BACKOFF, type RetryBackoff } from "./retry-backoff.ts";
import { LoadFailed, VersionLoader, type VersionLoaderOptions } from "./version-loader.ts";

export type { IndexEntry, ModelState } from "./model-life.ts";
export type { LoadReport } from "./model-lifecycle.ts";
export { LoadFailed } from "./version-loader.ts";

export type RepositoryOptions = Omit<VersionLoaderOptions, "warmupBudgetMs" | "accuracyTolerance"> & {
  /** A warm-up inference must finish within this many milliseconds (best of 3) before a version serves. Default 200. */
  warmupBudgetMs?: number;
  /** How far fixture accuracy may fall below the accuracy the config states for the version. Default 0.01. */
  accuracyTolerance?: number;
  /**
   * After a failed load, how long readiness checks wait before starting another (explicit loads and SIGHUP
   * never wait). Default: 1 s, doubling per consecutive failure, at most 30 s.
   */
  retryBackoff?: RetryBackoff;
  /** Called once, the first time every wanted model serves. */
  onFirstReady?: () => void;
};

/**
 * The model repository, split as Triton splits it: this class is the manager (Triton's ModelRepositoryManager):
 * which models the directory holds (model-discovery.ts; `load` and `loadCandidate` alike find a model directory
 * added since start), the pool's readiness over all of them, and each call handed to the model's lifecycle
 * (model-lifecycle.ts, Triton's ModelLifeCycle, over its state in model-life.ts).
 */
export class ModelRepository {
  readonly #options: RepositoryOptions;
  readonly #log: Logger;
  readonly #models = new Map<string, ModelLifecycle>();
  readonly #context: LifecycleContext;
  #announced = false;
  /** After `close()`: no more loads. */
  #closed = false;

  constructor(options: RepositoryOptions, recorder: Recorder, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#context = {
      loader: new VersionLoader({ warmupBudgetMs: 200, accuracyTolerance: 0.01, ...options }, recorder),
      recorder,
      log,
      provider: options.provider,
      retryBackoff: options.retryBackoff ?? DEFAULT_RETRY_BACKOFF,
      closed: () => this.#closed,
      loadEnded: () => this.#announceIfReady(),
    };
  }

  /** Find the model directories; throws when the repository is missing or holds no model. */
  async discover(): Promise<string[]> {
    const names = await discoverModels(this.#options.modelsDir);
    if (names.length === 0) throw new Error(`model repository ${this.#options.modelsDir}: no <name>/config.json found`);
    for (const name of names) this.#modelFor(name);
    return names;
  }

  /** Load every wanted model; resolves when every load has ended (failures are logged and kept as reasons). */
  async loadAll(): Promise<void> {
    const names = this.#wanted().map((m) => m.name);
    await Promise.allSettled(names.map((name) => this.load(name)));
  }

  /**
   * Start a load for every wanted model that neither serves nor is loading, unless its last load failed less
   * than the retry backoff ago (readiness checks call this). A load's failure is its model's: logged and kept
   * as its reason (`notReadyReason`), not this caller's.
   */
  ensureLoading(name?: string): void {
    const now = performance.now();
    for (const model of name ? [this.#get(name)] : this.#models.values()) {
      if (loadDue(model.view(), now)) {
        this.load(model.name).catch((err: Error) => {
          // A failed load was logged and counted by the lifecycle; anything else that kept it from starting is said here.
          if (!(err instanceof LoadFailed))
            this.#log("warn", "model load not started", { model: model.name, reason: err.message });
        });
      }
    }
  }

  /**
   * The pod's readiness (`poolReady`): one wanted model serves and every other has served or failed (listed by
   * `failedModels()`, with the reason; readiness checks retry it with backoff).
   */
  ready(): boolean {
    return poolReady([...this.#models.values()].map((m) => m.view()));
  }

  /** Why the repository is not ready, one line per model. */
  notReadyReasons(): string[] {
    if (this.#models.size === 0) return ["no models found"];
    return this.#wanted().flatMap((m) => (m.view().serving ? [] : [`${m.name}: ${whyNotServing(m.view())}`]));
  }

  /** Wanted models that do not serve because their last load failed, with why (the pod is ready without them). */
  failedModels(): { model: string; reason: string }[] {
    return this.#sorted().flatMap((m) => {
      const reason = failedReason(m.view());
      return reason === undefined ? [] : [{ model: m.name, reason }];
    });
  }

  /** Why `name` does not serve (undefined when it does); 404 for an unknown model. */
  notReadyReason(name: string): string | undefined {
    const view = this.#get(name).view();
    return view.serving ? undefined : whyNotServing(view);
  }

  /** Whether `name` (at `version`, if given) serves; 404 for an unknown model. */
  modelReady(name: string, version?: string): boolean {
    const { serving } = this.#get(name).versions();
    return serving !== undefined && (version === undefined || serving.version === version);
  }

  /**
   * A lease on the version serving `name` (or exactly `version`): 404 for an unknown model or a version not
   * served, 503 while the model is not loaded.
   */
  acquire(name: string, version?: string): Lease {
    return this.#get(name).acquire(version);
  }

  /** The serving version and the rollout's candidate of `name`, if any (404 for an unknown model). */
  versions(name: string): { serving?: ModelVersion; candidate?: ModelVersion } {
    return this.#get(name).versions();
  }

  /** v2 model metadata of the serving version. */
  metadata(name: string, version?: string): ModelMetadata {
    const lease = this.acquire(name, version);
    lease.release();
    return describeModel(lease.model.config, [lease.model.version], name);
  }

  /** Every model and version the repository knows, with its state. */
  index(): IndexEntry[] {
    return this.#sorted().flatMap((m) => m.index());
  }

  /**
   * Load `version` of `name` (default: the version its config.json names, re-read from disk) and swap it in.
   * Concurrent identical loads share one attempt. On failure the serving version keeps serving and the
   * error says why (`LoadFailed`, 400); 404 when the repository has no such model; 409 during its rollout.
   */
  async load(name: string, version?: string): Promise<LoadReport> {
    return (await this.#discoverOne(name)).load(version);
  }

  /**
   * Load and check `version` of `name` beside the serving version, as the candidate of a rollout: the same
   * checks as `load` (checksum, signature, session, warm-up, fixture), no swap. A candidate already there is
   * retired. Fails with `LoadFailed` (the serving version is untouched); 409 when the model does not serve.
   */
  async loadCandidate(name: string, version: string): Promise<LoadReport> {
    return (await this.#discoverOne(name)).loadCandidate(version);
  }

  /** `name`'s config.json as it is on disk now (rollouts read the gates' records from it). */
  async configOnDisk(name: string): Promise<ModelConfig> {
    this.#get(name);
    return this.#context.loader.config(name);
  }

  /** Whether the candidate of `name` answers clients (a canary above 0%), so that requests may pin it. */
  candidateServes(name: string, serves: boolean): void {
    this.#get(name).candidateServes(serves);
  }

  /** The candidate becomes the serving version (the rollout's promotion); the old one finishes its requests. */
  async promoteCandidate(name: string): Promise<void> {
    await this.#get(name).promoteCandidate();
  }

  /** Retire the candidate of `name` (a rollback); requests holding it finish first. */
  async dropCandidate(name: string): Promise<void> {
    await this.#get(name).dropCandidate();
  }

  /** Stop serving `name` (and drop a rollout's candidate); requests already holding it finish first. 404 when unknown. */
  async unload(name: string): Promise<IndexEntry> {
    await this.#get(name).unload();
    return { name, state: "UNAVAILABLE", reason: "unloaded" };
  }

  /** SIGHUP: load every wanted model again from disk, including directories added since start. */
  async reloadAll(): Promise<PromiseSettledResult<LoadReport>[]> {
    for (const name of await discoverModels(this.#options.modelsDir)) this.#modelFor(name);
    const wanted = this.#wanted();
    for (const m of wanted) {
      const { candidate } = m.versions();
      if (candidate) {
        this.#log("info", "SIGHUP: not reloading a model in a rollout", {
          model: m.name,
          candidate: candidate.version,
        });
      }
    }
    return Promise.allSettled(wanted.filter((m) => !m.versions().candidate).map((m) => m.load()));
  }

  /**
   * Refuse new loads, let every model's operations end (a load discards its version: nothing wants it any
   * more), then retire every version and wait until their sessions are released.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#models.values()].map((m) => m.close()));
  }

  #get(name: string): ModelLifecycle {
    const model = this.#models.get(name);
    if (!model) throw this.#unknown(name);
    return model;
  }

  #wanted(): ModelLifecycle[] {
    return [...this.#models.values()].filter((m) => m.view().wanted);
  }

  #sorted(): ModelLifecycle[] {
    return [...this.#models.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** 404 for a model the repository does not have, naming those it has. */
  #unknown(name: string): NotFound {
    const known = [...this.#models.keys()].sort();
    return new NotFound(
      `unknown model "${name}"; this pool serves ${known.map((n) => `"${n}"`).join(", ") || "no model"}`,
    );
  }

  #modelFor(name: string): ModelLifecycle {
    let model = this.#models.get(name);
    if (!model) {
      model = new ModelLifecycle(name, this.#context);
      this.#models.set(name, model);
    }
    return model;
  }

  /** The model `name`, adding a model directory created since start (Triton's explicit model control). */
  async #discoverOne(name: string): Promise<ModelLifecycle> {
    const known = this.#models.get(name);
    if (known) return known;
    if (!(await isModelDir(this.#options.modelsDir, name))) throw this.#unknown(name);
    return this.#modelFor(name);
  }

  /** Tells `onFirstReady` once, after a load succeeded or failed: either can settle the last wanted model. */
  #announceIfReady(): void {
    if (this.#announced || !this.ready()) return;
    this.#announced = true;
    const failed = this.failedModels();
    if (failed.length > 0) {
      this.#log("warn", "ready without some models: their load failed", { failed });
    }
    this.#options.onFirstReady?.();
  }
}
