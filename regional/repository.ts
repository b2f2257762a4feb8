import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Conflict, ModelNotReady, NotFound, NotReady, ServingError } from "../protocol/errors.ts";
import { heldoutPath } from "../protocol/heldout.ts";
import { describeModel, type ModelConfig } from "../protocol/model-config.ts";
import type { ModelPublicKey } from "../protocol/model-signature.ts";
import type { ModelMetadata } from "../protocol/types.ts";
import { DynamicBatcher } from "./batcher.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import type { ExecutorFactory } from "./executor.ts";
import { FixtureCache } from "./heldout-fixture.ts";
import type { Logger } from "./log.ts";
import { discoverModels, isModelDir, readModelConfig } from "./model-discovery.ts";
import { type Lease, ModelVersion } from "./model-version.ts";
import { failedReason, loadDue, type ModelLifecycleView, poolReady, whyNotServing } from "./readiness-policy.ts";
import type { Recorder } from "./recorder.ts";
import { DEFAULT_RETRY_BACKOFF, type RetryBackoff, retryDelayMs } from "./retry-backoff.ts";
import { createOnnxModel } from "./session.ts";
import { type CheckedVersion, checkVersion, type VersionSources } from "./version-check.ts";

export interface RepositoryOptions {
  /** Triton layout: `<name>/config.json`, `<name>/<version>/<file>`. */
  modelsDir: string;
  provider: ExecutionProvider;
  /** Most rows per run; each model's `maxBatchSize` also caps it. */
  maxBatch: number;
  /** Requests waiting per version before `queueFull()`. */
  maxQueue: number;
  maxQueueDelayUs: number;
  queueFull: () => ServingError;
  /** A warm-up inference must finish within this many milliseconds (best of 3) before a version serves. Default 200. */
  warmupBudgetMs?: number;
  /** How far fixture accuracy may fall below the accuracy the config states for the version. Default 0.01. */
  accuracyTolerance?: number;
  /**
   * After a failed load, how long readiness checks wait before starting another (explicit loads and SIGHUP
   * never wait). Default: 1 s, doubling per consecutive failure, at most 30 s.
   */
  retryBackoff?: RetryBackoff;
  /**
   * The key every model file must be signed with (`--model-public-key`); a file unsigned, signed by another
   * key or altered is refused before onnxruntime sees it. Default: none, unsigned files are served.
   */
  publicKey?: ModelPublicKey;
  /** Tests only: extra milliseconds each run of a version takes, by `model@version`. Default: none. */
  simulatedVersionDelayMs?: ReadonlyMap<string, number>;
  /** How requests reach each version's session. Default: the dynamic batcher. */
  executor?: ExecutorFactory;
  /** Called once, the first time every wanted model serves. */
  onFirstReady?: () => void;
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

/** 400 for a load that failed; the message says why and what keeps serving. */
export class LoadFailed extends ServingError {
  constructor(message: string) {
    super(400, "load_failed", message);
  }
}

/** A version that passed every check, ready to swap in. */
type Checked = CheckedVersion & { config: ModelConfig };

interface Entry {
  name: string;
  serving?: ModelVersion;
  /** A version loaded and checked beside the serving one for a rollout (shadow, canary); it never swaps in by itself. */
  candidate?: ModelVersion;
  /** Whether the candidate answers clients (a canary above 0%): then a request may pin its version. */
  candidateServes: boolean;
  /** Versions swapped out that still finish requests. */
  draining: Set<ModelVersion>;
  /** The latest load queued, so that identical concurrent loads share it. `version` undefined: the config's. */
  loading?: { version: string | undefined; promise: Promise<LoadReport> };
  /** Loads and unloads of one model run one after another. */
  tail: Promise<void>;
  /** False after an unload: readiness neither waits for it nor reloads it. */
  wanted: boolean;
  lastError?: string;
  /** Loads failed since the last success. */
  failures: number;
  /** `performance.now()` before which readiness checks start no load (after a failure). */
  retryAtMs: number;
}

/**
 * The model repository's lifecycle, as Triton's ModelLifeCycle: per model, loads one after another (identical
 * concurrent loads share one attempt), the atomic swap, a rollout's candidate beside the serving version,
 * retirement behind leases (a swapped-out version finishes its requests before its session is released), and
 * readiness with a reason for every model that does not serve. Which models exist is discovery's
 * (model-discovery.ts); whether a version may serve is verification's (version-check.ts).
 */
export class ModelRepository {
  readonly #options: RepositoryOptions & {
    warmupBudgetMs: number;
    accuracyTolerance: number;
    retryBackoff: RetryBackoff;
  };
  readonly #recorder: Recorder;
  readonly #log: Logger;
  readonly #entries = new Map<string, Entry>();
  /** Each version is checked on its held-out fixture (`models/<name>/<version>/heldout.json`) before it serves. */
  readonly #fixtures = new FixtureCache();
  /** Where version checks read model files and fixtures, and how they open sessions. */
  readonly #sources: VersionSources = {
    modelBytes: (name, version, file) =>
      readFile(join(this.#options.modelsDir, name, version, file)).catch((err: Error) => {
        throw new Error(`cannot read ${name}/${version}/${file}: ${err.message}`);
      }),
    createSession: (bytes, io, weights) => createOnnxModel(bytes, io, this.#options.provider, weights),
    fixture: (config, version) => this.#fixtures.read(join(this.#options.modelsDir, heldoutPath(config, version))),
  };
  #announced = false;
  /** After `close()`: no more loads. */
  #closed = false;

  constructor(options: RepositoryOptions, recorder: Recorder, log: Logger) {
    this.#options = { warmupBudgetMs: 200, accuracyTolerance: 0.01, retryBackoff: DEFAULT_RETRY_BACKOFF, ...options };
    this.#recorder = recorder;
    this.#log = log;
  }

  /** Find the model directories; throws when the repository is missing or holds no model. */
  async discover(): Promise<string[]> {
    const names = await discoverModels(this.#options.modelsDir);
    if (names.length === 0) throw new Error(`model repository ${this.#options.modelsDir}: no <name>/config.json found`);
    for (const name of names) this.#entryFor(name);
    return names;
  }

  /** Load every wanted model; resolves when every load has ended (failures are logged and kept as reasons). */
  async loadAll(): Promise<void> {
    const names = [...this.#entries.values()].filter((e) => e.wanted).map((e) => e.name);
    await Promise.allSettled(names.map((name) => this.load(name)));
  }

  /**
   * Start a load for every wanted model that neither serves nor is loading, unless its last load failed less
   * than the retry backoff ago (readiness checks call this).
   */
  ensureLoading(name?: string): void {
    const now = performance.now();
    for (const entry of name ? [this.#get(name)] : this.#entries.values()) {
      if (loadDue(availability(entry), now)) {
        this.load(entry.name).catch(() => {});
      }
    }
  }

  /**
   * The pod's readiness (`poolReady`): one wanted model serves and every other has served or failed (listed by
   * `failedModels()`, with the reason; readiness checks retry it with backoff).
   */
  ready(): boolean {
    return poolReady([...this.#entries.values()].map(availability));
  }

  /** Why the repository is not ready, one line per model. */
  notReadyReasons(): string[] {
    const wanted = [...this.#entries.values()].filter((e) => e.wanted && !e.serving);
    if (this.#entries.size === 0) return ["no models found"];
    return wanted.map((e) => `${e.name}: ${why(e)}`);
  }

  /** Wanted models that do not serve because their last load failed, with why (the pod is ready without them). */
  failedModels(): { model: string; reason: string }[] {
    return [...this.#entries.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((e) => {
        const reason = failedReason(availability(e));
        return reason === undefined ? [] : [{ model: e.name, reason }];
      });
  }

  /** Why `name` does not serve (undefined when it does); 404 for an unknown model. */
  notReadyReason(name: string): string | undefined {
    const entry = this.#get(name);
    return entry.serving ? undefined : why(entry);
  }

  /** Whether `name` (at `version`, if given) serves; 404 for an unknown model. */
  modelReady(name: string, version?: string): boolean {
    const serving = this.#get(name).serving;
    return !!serving && (version === undefined || serving.version === version);
  }

  /**
   * A lease on the version serving `name` (or exactly `version`): 404 for an unknown model or a version not
   * served, 503 while the model is not loaded.
   */
  acquire(name: string, version?: string): Lease {
    const entry = this.#get(name);
    const serving = entry.serving;
    if (!serving) throw new ModelNotReady(`model "${name}" is not ready: ${why(entry)}`, 1);
    if (version !== undefined && version !== serving.version) {
      const candidate = entry.candidateServes ? entry.candidate : undefined;
      if (candidate && version === candidate.version) return candidate.lease();
      const served = candidate
        ? `versions ${serving.version} and ${candidate.version} are`
        : `version ${serving.version} is`;
      throw new NotFound(`model "${name}" version ${version} is not served; ${served}`);
    }
    return serving.lease();
  }

  /** The serving version and the rollout's candidate of `name`, if any (404 for an unknown model). */
  versions(name: string): { serving?: ModelVersion; candidate?: ModelVersion } {
    const { serving, candidate } = this.#get(name);
    return { serving, candidate };
  }

  /** v2 model metadata of the serving version. */
  metadata(name: string, version?: string): ModelMetadata {
    const lease = this.acquire(name, version);
    lease.release();
    return describeModel(lease.model.config, [lease.model.version], name);
  }

  /** Every model and version the repository knows, with its state. */
  index(): IndexEntry[] {
    const out: IndexEntry[] = [];
    for (const entry of [...this.#entries.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const { name } = entry;
      if (entry.serving) out.push({ name, version: entry.serving.version, state: "READY" });
      if (entry.candidate) out.push({ name, version: entry.candidate.version, state: "READY", candidate: true });
      for (const old of entry.draining) out.push({ name, version: old.version, state: "UNLOADING" });
      if (entry.loading) {
        out.push({ name, ...(entry.loading.version ? { version: entry.loading.version } : {}), state: "LOADING" });
      }
      if (!entry.serving && !entry.loading) {
        out.push({ name, state: "UNAVAILABLE", reason: why(entry) });
      }
    }
    return out;
  }

  /**
   * Load `version` of `name` (default: the version its config.json names, re-read from disk) and swap it in.
   * Concurrent identical loads share one attempt. On failure the serving version keeps serving and the
   * error says why (`LoadFailed`, 400); 404 when the repository has no such model.
   */
  async load(name: string, version?: string): Promise<LoadReport> {
    const entry = await this.#discoverOne(name);
    if (this.#closed) throw new NotReady(`model "${name}" cannot be loaded: the pool is shutting down`);
    if (entry.candidate) {
      throw new Conflict(
        `model "${name}" is in a rollout (candidate version ${entry.candidate.version}); promote it or roll it back first`,
      );
    }
    if (entry.loading && entry.loading.version === version) return entry.loading.promise;
    entry.wanted = true;
    const promise = this.#serially(entry, () => this.#loadNow(entry, version));
    entry.loading = { version, promise };
    const clear = () => {
      if (entry.loading?.promise === promise) entry.loading = undefined;
    };
    promise.then(clear, clear);
    return promise;
  }

  /**
   * Load and check `version` of `name` beside the serving version, as the candidate of a rollout: the same
   * checks as `load` (checksum, signature, session, warm-up, fixture), no swap. A candidate already there is
   * retired first. Fails with `LoadFailed` (the serving version is untouched).
   */
  async loadCandidate(name: string, version: string): Promise<LoadReport> {
    const entry = this.#get(name);
    if (this.#closed) throw new NotReady(`model "${name}" cannot be loaded: the pool is shutting down`);
    return this.#serially(entry, async () => {
      const model = await this.#prepare(entry, version);
      this.#dropCandidate(entry);
      entry.candidate = model;
      entry.candidateServes = false;
      model.recorder.ready(true);
      this.#recorder.modelLoad(name, "success");
      const report = this.#report(model, entry.serving?.version ?? null);
      this.#log("info", "rollout candidate loaded", { ...report });
      return report;
    });
  }

  /** `name`'s config.json as it is on disk now (rollouts read the gates' records from it). */
  async configOnDisk(name: string): Promise<ModelConfig> {
    this.#get(name);
    return readModelConfig(this.#options.modelsDir, name);
  }

  /** Whether the candidate of `name` answers clients (a canary above 0%), so that requests may pin it. */
  candidateServes(name: string, serves: boolean): void {
    this.#get(name).candidateServes = serves;
  }

  /** The candidate becomes the serving version (the rollout's promotion); the old one finishes its requests. */
  async promoteCandidate(name: string): Promise<void> {
    const entry = this.#get(name);
    await this.#serially(entry, async () => {
      const model = entry.candidate;
      if (!model) return;
      entry.candidate = undefined;
      entry.candidateServes = false;
      this.#swapIn(entry, model);
      this.#log("info", "rollout candidate promoted", { model: name, version: model.version });
    });
  }

  /** Retire the candidate of `name` (a rollback); requests holding it finish first. */
  async dropCandidate(name: string): Promise<void> {
    const entry = this.#get(name);
    await this.#serially(entry, async () => this.#dropCandidate(entry));
  }

  #dropCandidate(entry: Entry): void {
    const model = entry.candidate;
    if (!model) return;
    entry.candidate = undefined;
    entry.candidateServes = false;
    model.recorder.ready(false);
    this.#retire(entry, model);
  }

  /** Stop serving `name` (and drop a rollout's candidate); requests already holding it finish first. 404 when unknown. */
  async unload(name: string): Promise<IndexEntry> {
    const entry = this.#get(name);
    entry.wanted = false;
    await this.#serially(entry, async () => {
      this.#dropCandidate(entry);
      const old = entry.serving;
      if (!old) return;
      entry.serving = undefined;
      old.recorder.ready(false);
      this.#retire(entry, old);
      this.#log("info", "model unloaded", { model: name, version: old.version, inFlight: old.leases });
    });
    return { name, state: "UNAVAILABLE", reason: "unloaded" };
  }

  /** SIGHUP: load every wanted model again from disk, including directories added since start. */
  async reloadAll(): Promise<PromiseSettledResult<LoadReport>[]> {
    for (const name of await discoverModels(this.#options.modelsDir)) this.#entryFor(name);
    const inRollout = [...this.#entries.values()].filter((e) => e.wanted && e.candidate);
    for (const e of inRollout) {
      this.#log("info", "SIGHUP: not reloading a model in a rollout", {
        model: e.name,
        candidate: e.candidate!.version,
      });
    }
    const wanted = [...this.#entries.values()].filter((e) => e.wanted && !e.candidate);
    return Promise.allSettled(wanted.map((e) => this.load(e.name)));
  }

  /**
   * Refuse new loads, let the loads in progress end (each discards its version: nothing wants it any more),
   * then retire every version and wait until their sessions are released.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const entry of this.#entries.values()) entry.wanted = false;
    await Promise.all([...this.#entries.values()].map((entry) => entry.tail));
    const released: Promise<void>[] = [];
    for (const entry of this.#entries.values()) {
      for (const model of [entry.serving, entry.candidate]) {
        if (!model) continue;
        model.recorder.ready(false);
        released.push(model.retire());
      }
      entry.serving = undefined;
      entry.candidate = undefined;
      for (const old of entry.draining) released.push(old.retire());
    }
    await Promise.all(released);
  }

  #get(name: string): Entry {
    const entry = this.#entries.get(name);
    if (!entry) throw this.#unknown(name);
    return entry;
  }

  /** 404 for a model the repository does not have, naming those it has. */
  #unknown(name: string): NotFound {
    const known = [...this.#entries.keys()].sort();
    return new NotFound(
      `unknown model "${name}"; this pool serves ${known.map((n) => `"${n}"`).join(", ") || "no model"}`,
    );
  }

  #entryFor(name: string): Entry {
    let entry = this.#entries.get(name);
    if (!entry) {
      entry = {
        name,
        candidateServes: false,
        draining: new Set(),
        tail: Promise.resolve(),
        wanted: true,
        failures: 0,
        retryAtMs: 0,
      };
      this.#entries.set(name, entry);
    }
    return entry;
  }

  /** The entry for `name`, adding a model directory created since start (Triton's explicit model control). */
  async #discoverOne(name: string): Promise<Entry> {
    const known = this.#entries.get(name);
    if (known) return known;
    if (!(await isModelDir(this.#options.modelsDir, name))) throw this.#unknown(name);
    return this.#entryFor(name);
  }

  #serially<T>(entry: Entry, op: () => Promise<T>): Promise<T> {
    const result = entry.tail.then(op);
    entry.tail = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  #retire(entry: Entry, old: ModelVersion): void {
    entry.draining.add(old);
    void old.retire().then(() => {
      entry.draining.delete(old);
      this.#log("info", "model version released", { model: entry.name, version: old.version });
    });
  }

  async #loadNow(entry: Entry, requested: string | undefined): Promise<LoadReport> {
    const started = performance.now();
    const model = await this.#prepare(entry, requested);
    const previous = this.#swapIn(entry, model);
    this.#recorder.modelLoad(entry.name, "success");
    const report = this.#report(model, previous?.version ?? null);
    this.#log("info", "model version serving", { ...report, loadMs: performance.now() - started });
    this.#announceIfReady();
    return report;
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

  /** Checks (`#check`) and builds a version with its executor, unless nothing wants the model any more. */
  async #prepare(entry: Entry, requested: string | undefined): Promise<ModelVersion> {
    const { name } = entry;
    const { config, version, io, session, checks } = await this.#check(entry, requested);
    if (!entry.wanted) {
      // Unloaded, or the pool began shutting down, while this version was checked: swapped in, its session
      // would never be released.
      await session.release();
      const reason = this.#closed ? "the pool is shutting down" : "the model was unloaded meanwhile";
      this.#log("info", "model load discarded", { model: name, version, reason });
      throw new LoadFailed(`loading model "${name}" version ${version} was discarded: ${reason}`);
    }
    const recorder = this.#recorder.model(name, version);
    const executor = (this.#options.executor ?? ((c) => new DynamicBatcher(c)))({
      run: session.run,
      maxBatch: Math.min(this.#options.maxBatch, config.maxBatchSize),
      maxQueue: this.#options.maxQueue,
      maxQueueDelayUs: this.#options.maxQueueDelayUs,
      queueFull: this.#options.queueFull,
      recorder,
    });
    const simulatedDelayMs = this.#options.simulatedVersionDelayMs?.get(`${name}@${version}`) ?? 0;
    return new ModelVersion({ config, version, io, session, executor, recorder, checks, simulatedDelayMs });
  }

  /** The swap: one assignment. Requests that took a lease on the old version keep it until they answer. */
  #swapIn(entry: Entry, model: ModelVersion): ModelVersion | undefined {
    const previous = entry.serving;
    entry.serving = model;
    entry.lastError = undefined;
    entry.failures = 0;
    entry.retryAtMs = 0;
    // Each instance has its own ready cell (metrics.ts), so a reload of the same version sets the old
    // instance's to 0 and the new one's to 1, and the series says 1.
    previous?.recorder.ready(false);
    model.recorder.ready(true);
    if (previous) this.#retire(entry, previous);
    return previous;
  }

  #report(model: ModelVersion, previous: string | null): LoadReport {
    return {
      name: model.name,
      version: model.version,
      state: "READY",
      previous,
      provider: this.#options.provider,
      ...model.checks,
    };
  }

  /**
   * Read the config and verify the version (version-check.ts). On failure the failure is logged and counted
   * and `LoadFailed` thrown.
   */
  async #check(entry: Entry, requested: string | undefined): Promise<Checked> {
    const { name } = entry;
    let version = requested;
    try {
      const config = await readModelConfig(this.#options.modelsDir, name);
      version = requested ?? config.version;
      return { config, ...(await checkVersion(config, version, this.#sources, this.#options)) };
    } catch (err) {
      const reason = (err as Error).message;
      entry.lastError = reason;
      entry.failures++;
      entry.retryAtMs = performance.now() + retryDelayMs(entry.failures, this.#options.retryBackoff);
      this.#recorder.modelLoad(name, "failure");
      const serving = entry.serving?.version;
      this.#log("warn", "model load failed", {
        model: name,
        version: version ?? null,
        reason,
        serving: serving ?? null,
      });
      const keeps = serving ? `version ${serving} keeps serving` : "the model is not served";
      this.#announceIfReady();
      throw new LoadFailed(
        `loading model "${name}"${version ? ` version ${version}` : ""} failed: ${reason}; ${keeps}`,
      );
    }
  }
}

/** What the readiness policies (readiness-policy.ts) read of an entry. */
function availability(entry: Entry): ModelLifecycleView {
  const { wanted, lastError, failures, retryAtMs } = entry;
  return { wanted, serving: !!entry.serving, loading: !!entry.loading, lastError, failures, retryAtMs };
}

/** Why a model does not serve, for readiness bodies, 503s and the index. */
function why(entry: Entry): string {
  return whyNotServing(availability(entry));
}
