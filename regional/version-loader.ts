import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ServingError } from "../protocol/errors.ts";
import { heldoutPath } from "../protocol/heldout.ts";
import type { ModelConfig } from "../protocol/model-config.ts";
import type { ModelPublicKey } from "../protocol/model-signature.ts";
import { DynamicBatcher } from "./batcher.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import type { ExecutorFactory } from "./executor.ts";
import { FixtureCache } from "./heldout-fixture.ts";
import { versionBytes } from "./memory-budget.ts";
import { readModelConfig } from "./model-discovery.ts";
import { ModelVersion, type VersionChecks } from "./model-version.ts";
import type { Recorder } from "./recorder.ts";
import { createOnnxModel, type OnnxModel } from "./session.ts";
import { type CheckedVersion, checkVersion, type VersionSources } from "./version-check.ts";

/** 400 for a load that failed; the message says why and what keeps serving. */
export class LoadFailed extends ServingError {
  constructor(message: string) {
    super(400, "load_failed", message);
  }
}

export interface VersionLoaderOptions {
  /** Triton layout: `<name>/config.json`, `<name>/<version>/<file>`. */
  modelsDir: string;
  provider: ExecutionProvider;
  /** Most rows per run; each model's `maxBatchSize` also caps it. */
  maxBatch: number;
  /** Requests waiting per version before `queueFull()`. */
  maxQueue: number;
  maxQueueDelayUs: number;
  queueFull: () => ServingError;
  /** A warm-up inference must finish within this many milliseconds (best of 3) before a version serves. */
  warmupBudgetMs: number;
  /** How far fixture accuracy may fall below the accuracy the config states for the version. */
  accuracyTolerance: number;
  /** The key every model file must be signed with; none: unsigned files are served. */
  publicKey?: ModelPublicKey;
  /**
   * What runs a checked version's rows, live and shadow: its session, or a wrapper around it (the
   * `--version-delay-ms` simulation, regional/version-delay.ts). Default: the session itself.
   */
  wrapSession?: (session: OnnxModel, version: { name: string; version: string }) => OnnxModel;
  /** How requests reach each version's session. Default: the dynamic batcher. */
  executor?: ExecutorFactory;
}

/** A version that passed every check, its session open, not yet built into a servable version. */
export type Checked = CheckedVersion & { config: ModelConfig };

/**
 * Loading one version, apart from the lifecycle (repository.ts): its config.json read again from disk, every
 * check of version-check.ts (file, signature, session, warm-up, fixture) over the repository's files, then
 * the version built with its executor. A check's failure throws with the reason alone; the repository words
 * the `LoadFailed`.
 */
export class VersionLoader {
  readonly #options: VersionLoaderOptions;
  readonly #recorder: Recorder;
  /** Each version is checked on its held-out fixture (`models/<name>/<version>/heldout.json`) before it serves. */
  readonly #fixtures = new FixtureCache();
  /** Where version checks read model files and fixtures, and how they open sessions. */
  readonly #sources: VersionSources;
  /** What each file that passed its checks in this process checked, by `name@version:sha256`. */
  readonly #passed = new Map<string, VersionChecks>();

  constructor(options: VersionLoaderOptions, recorder: Recorder) {
    this.#options = options;
    this.#recorder = recorder;
    const { modelsDir, provider } = options;
    this.#sources = {
      modelBytes: (name, version, file) =>
        readFile(join(modelsDir, name, version, file)).catch((err: Error) => {
          throw new Error(`cannot read ${name}/${version}/${file}: ${err.message}`);
        }),
      createSession: (bytes, io, weights) => createOnnxModel(bytes, io, provider, weights),
      fixture: (config, version) => this.#fixtures.read(join(modelsDir, heldoutPath(config, version))),
      checkedBefore: (name, version, sha256) => this.#passed.get(`${name}@${version}:${sha256}`),
    };
  }

  /** `name`'s config.json as it is on disk now, validated. */
  config(name: string): Promise<ModelConfig> {
    return readModelConfig(this.#options.modelsDir, name);
  }

  /** Every check of `version` of the model `config` describes; its session is open when it resolves. */
  async check(config: ModelConfig, version: string): Promise<Checked> {
    const checked = await checkVersion(config, version, this.#sources, this.#options);
    this.#passed.set(`${config.name}@${version}:${checked.checks.sha256}`, checked.checks);
    return { config, ...checked };
  }

  /** A checked version built into one that serves: its session (wrapped, if asked), executor and recorder. */
  build({ config, version, io, session: checked, checks }: Checked): ModelVersion {
    const { name } = config;
    const session = this.#options.wrapSession?.(checked, { name, version }) ?? checked;
    const recorder = this.#recorder.model(name, version);
    const executor = (this.#options.executor ?? ((c) => new DynamicBatcher(c)))({
      run: session.run,
      // The batcher's limit is the model's: a graph with a fixed batch takes that many rows per run.
      maxBatch: Math.min(this.#options.maxBatch, config.maxBatchSize, io.fixedBatch ?? Number.POSITIVE_INFINITY),
      maxQueue: this.#options.maxQueue,
      maxQueueDelayUs: this.#options.maxQueueDelayUs,
      queueFull: this.#options.queueFull,
      recorder,
    });
    const bytes = versionBytes(config.versions[version]!.bytes);
    return new ModelVersion({ config, version, io, session, executor, recorder, checks, bytes });
  }
}
