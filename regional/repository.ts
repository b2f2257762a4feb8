import { NotFound } from "../protocol/errors.ts";
import { describeModel, type ModelConfig, type ModelIo } from "../protocol/model-config.ts";
import type { ModelMetadata } from "../protocol/types.ts";
import type { Logger } from "./log.ts";
import { type LoadPolicy, resolveLoadPolicy } from "./memory-budget.ts";
import { ModelConfigs } from "./model-configs.ts";
import { discoverModels, discoverRepository, isModelDir } from "./model-discovery.ts";
import type { IndexEntry } from "./model-life.ts";
import { type LifecycleContext, type LoadReport, type LoadTrigger, ModelLifecycle } from "./model-lifecycle.ts";
import type { Lease, ModelVersion } from "./model-version.ts";
import { OnDemandLoads } from "./on-demand.ts";
import {
  demandLoadAllowed,
  failedModels,
  loadDue,
  type ModelLifecycleView,
  notReadyLines,
  poolReady,
  whyNotServing,
} from "./readiness-policy.ts";
import type { ModelMemory, Recorder } from "./recorder.ts";
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
  /** Default `all`. */
  loadPolicy?: LoadPolicy;
  /** Models always loaded (and never evicted) under `on-demand`; each must be in the repository. */
  pinned?: readonly string[];
  /** The memory the loaded versions may be counted as under `on-demand` (memory-budget.ts). Default 256 MiB. */
  memoryBudgetBytes?: number;
};

/**
 * The model repository, split as Triton splits it: this class is the manager (Triton's ModelRepositoryManager):
 * which models the directory holds (model-discovery.ts; `load` and `loadCandidate` alike find a model directory
 * added since start), the load policy (loads on demand and within the memory budget: on-demand.ts), the pool's
 * readiness over all of them, and each call handed to the model's lifecycle (model-lifecycle.ts, Triton's
 * ModelLifeCycle, over its state in model-life.ts).
 */
export class ModelRepository {
  readonly #options: RepositoryOptions;
  readonly #log: Logger;
  readonly #models = new Map<string, ModelLifecycle>();
  readonly #context: LifecycleContext;
  #announced = false;
  /** After `close()`: no more loads. */
  #closed = false;
  /** The policy in force once `discover` resolved `auto`. */
  #policy: "all" | "on-demand" = "all";
  readonly #onDemand: OnDemandLoads;
  readonly #configs: ModelConfigs;

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
    this.#configs = new ModelConfigs((name) => this.#context.loader.config(name));
    this.#onDemand = new OnDemandLoads({
      budgetBytes: options.memoryBudgetBytes ?? 256 * 2 ** 20,
      models: () => this.#models.values(),
      readConfig: (name) => this.#configs.reread(name),
    });
    recorder.modelMemory(() => this.memory());
  }

  /** The load policy in force (`auto` resolved by `discover`). */
  get policy(): "all" | "on-demand" {
    return this.#policy;
  }

  /**
   * Find the model directories and read their configs, resolve the load policy and pin its models; throws when
   * the repository is missing or holds no model, or a pinned model is not in it. A config that cannot be read
   * is left to the model's load, which fails with the reason.
   */
  async discover(): Promise<string[]> {
    const pinned = new Set(this.#options.pinned ?? []);
    const { names, configs, estimatedBytes } = await discoverRepository(this.#options.modelsDir, pinned);
    for (const config of configs) this.#configs.set(config);
    const asked = this.#options.loadPolicy ?? "all";
    const { budget } = this.#onDemand;
    this.#policy = resolveLoadPolicy(asked, estimatedBytes, budget.budgetBytes);
    for (const name of names) this.#modelFor(name).pinned = this.#policy === "all" || pinned.has(name);
    this.#log("info", `load policy: ${this.#policy}`, {
      asked,
      models: names.length,
      pinned: this.#policy === "all" ? names.length : pinned.size,
      estimatedBytes,
      ...(this.#policy === "on-demand" ? { budgetBytes: budget.budgetBytes } : {}),
    });
    return names;
  }

  /**
   * Load every wanted model (under `on-demand`, the pinned ones); resolves when every load has ended (failures
   * are logged and kept as reasons).
   */
  async loadAll(): Promise<void> {
    const names = this.#wanted().map((m) => m.name);
    await Promise.allSettled(names.map((name) => this.load(name, undefined, "policy")));
    this.#announceIfReady();
  }

  /** The memory and model counts `/metrics` and readiness report. */
  memory(): ModelMemory {
    return this.#onDemand.memory(this.#policy === "on-demand");
  }

  /** Versions evicted to make room within the memory budget so far (`on-demand`). */
  get evictions(): number {
    return this.#onDemand.budget.evictions;
  }

  /**
   * Start a load for every wanted model that neither serves nor is loading, unless its last load failed less
   * than the retry backoff ago (readiness checks call this). A load's failure is its model's: logged and kept
   * as its reason (`notReadyReason`), not this caller's.
   */
  ensureLoading(name?: string): void {
    const now = performance.now();
    for (const model of name ? [this.#get(name)] : this.#models.values()) {
      if (loadDue(model.view(), now)) this.load(model.name, undefined, "policy").catch(this.#notStarted(model.name));
    }
    // Asking whether a model loaded on demand is ready starts its load, as its first request would.
    if (name && this.#policy === "on-demand") {
      const model = this.#get(name);
      if (!model.pinned && demandLoadAllowed(model.view(), now))
        this.#onDemand.start(model).catch(this.#notStarted(name));
    }
  }

  /**
   * The pod's readiness (`poolReady`): one wanted model serves and every other has served or failed (listed by
   * `failedModels()`, with the reason; readiness checks retry it with backoff).
   */
  ready(): boolean {
    return poolReady(this.#views().map((m) => m.view));
  }

  /** Why the repository is not ready, one line per model. */
  notReadyReasons(): string[] {
    return notReadyLines(this.#views());
  }

  /** Wanted models that do not serve because their last load failed, with why (the pod is ready without them). */
  failedModels(): { model: string; reason: string }[] {
    return failedModels(this.#views());
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

  /** A lease on the version serving `name` (or exactly `version`): 404 unknown or not served, 503 not loaded. */
  acquire(name: string, version?: string): Lease {
    return this.#get(name).acquire(version);
  }

  /**
   * A request's lease on `name` (or exactly `version`): at once while it serves (no promise on the hot path);
   * under `on-demand`, after the load a request starts (every request waiting for it shares that one load),
   * waited for within the request's deadline (`deadlineUs`, `nowUs` clock: 504 past it, the load goes on). 503
   * with the reason for a model that cannot load now: unloaded, or within the retry backoff of a failed load.
   */
  lease(name: string, version: string | undefined, deadlineUs: number): Lease | Promise<Lease> {
    const model = this.#get(name);
    model.lastUsed = performance.now();
    if (model.serves || this.#policy === "all") return model.acquire(version);
    if (!demandLoadAllowed(model.view(), model.lastUsed)) return model.acquire(version);
    return this.#onDemand.waitFor(model, deadlineUs).then(() => model.acquire(version));
  }

  /**
   * Whether this process runs `name`'s requests itself whatever its placement (404 for an unknown model): every
   * model under `all`, and under `on-demand` a pinned model or one it serves now.
   */
  runsHere(name: string): boolean {
    const model = this.#get(name);
    return this.#policy === "all" || model.pinned || model.serves;
  }

  /**
   * Whether `name` loads on its next request rather than now (404 for an unknown model): under `on-demand`, not
   * pinned, neither serving nor loading. The registry's follower leaves such a model to its next request.
   */
  loadsOnDemand(name: string): boolean {
    const model = this.#get(name);
    const view = model.view();
    return this.#policy === "on-demand" && !model.pinned && !view.serving && !view.loading;
  }

  /**
   * Read `name`'s config.json again after it was rewritten (the registry's follower names the served version in
   * it): the metadata and inputs of a model not loaded come from it, and its next load takes that version.
   */
  async configChanged(name: string): Promise<void> {
    this.#get(name);
    await this.#configs.reread(name);
  }

  /** `name`'s inputs and outputs from its config, loaded or not (404 for an unknown model). */
  io(name: string): ModelIo {
    const model = this.#get(name);
    return this.#configs.io(name) ?? model.acquire().model.io; // never read: 503 with why, unless it serves
  }

  /** The serving version and the rollout's candidate of `name`, if any (404 for an unknown model). */
  versions(name: string): { serving?: ModelVersion; candidate?: ModelVersion } {
    return this.#get(name).versions();
  }

  /**
   * v2 model metadata of the serving version; of a model that loads on demand and is not loaded, from its
   * config (the version it names).
   */
  metadata(name: string, version?: string): ModelMetadata {
    const model = this.#get(name);
    const fromConfig = !model.serves && !model.pinned && !model.view().unloaded;
    const described = fromConfig ? this.#configs.metadata(name, version) : undefined;
    if (described) return described;
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
   * An explicit load (`control`) pins the model until it is unloaded; under `on-demand` every load first makes
   * room within the memory budget (503 when it cannot).
   */
  async load(name: string, version?: string, trigger: LoadTrigger = "control"): Promise<LoadReport> {
    const model = await this.#discoverOne(name);
    if (trigger === "control") model.pinned = true;
    return this.#withRoom(model, version, () => model.load(version, trigger));
  }

  /**
   * Load and check `version` of `name` beside the serving version, as the candidate of a rollout: the same
   * checks as `load` (checksum, signature, session, warm-up, fixture), no swap. A candidate already there is
   * retired. Fails with `LoadFailed` (the serving version is untouched); 409 when the model does not serve.
   */
  async loadCandidate(name: string, version: string): Promise<LoadReport> {
    const model = await this.#discoverOne(name);
    return this.#withRoom(model, version, () => model.loadCandidate(version));
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
    const model = this.#get(name);
    if (this.#policy === "on-demand") model.pinned = false;
    await model.unload();
    return { name, state: "UNAVAILABLE", reason: "unloaded" };
  }

  /**
   * SIGHUP: load every wanted model (and, under `on-demand`, every model loaded now) again from disk, including
   * directories added since start.
   */
  async reloadAll(): Promise<PromiseSettledResult<LoadReport>[]> {
    for (const name of await discoverModels(this.#options.modelsDir)) this.#modelFor(name);
    const wanted = [...this.#models.values()].filter((m) => m.view().wanted || m.serves);
    const reloaded = wanted.filter((m) => {
      const { candidate } = m.versions();
      const fields = { model: m.name, candidate: candidate?.version };
      if (candidate) this.#log("info", "SIGHUP: not reloading a model in a rollout", fields);
      return !candidate;
    });
    return Promise.allSettled(reloaded.map((m) => this.#withRoom(m, undefined, () => m.load(undefined, "control"))));
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

  #views(): { name: string; view: ModelLifecycleView }[] {
    return [...this.#models.values()].map((m) => ({ name: m.name, view: m.view() }));
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
      model.pinned = this.#policy === "all";
      this.#models.set(name, model);
    }
    return model;
  }

  /** A background load's failure: a failed load was logged and counted by the lifecycle, any other is said here. */
  #notStarted(model: string): (err: Error) => void {
    return (err) => {
      if (!(err instanceof LoadFailed)) this.#log("warn", "model load not started", { model, reason: err.message });
    };
  }

  /** `load` run with room made for the version it brings, under `on-demand` (on-demand.ts). */
  #withRoom<T>(model: ModelLifecycle, version: string | undefined, load: () => Promise<T>): Promise<T> {
    return this.#policy === "on-demand" ? this.#onDemand.withRoom(model, version, load) : load();
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
    if (failed.length > 0) this.#log("warn", "ready without some models: their load failed", { failed });
    this.#options.onFirstReady?.();
  }
}
