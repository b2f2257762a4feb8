import type { ModelConfig, ModelIo } from "../protocol/model-config.ts";
import type { InputRows } from "../protocol/tensor.ts";
import type { Executed, Executor } from "./executor.ts";
import type { ModelRecorder, VersionBaseline } from "./recorder.ts";
import type { OnnxModel } from "./session.ts";

/** What a version's load checked. */
export interface VersionChecks {
  sha256: string;
  warmupMs: number;
  fixture: { rows: number; accuracy: number; required: number };
}

/** A request's hold on the version it started with; the version's session stays open until every lease is released. */
export interface Lease {
  readonly model: ModelVersion;
  release(): void;
}

/**
 * One loaded, checked version of a model: its session, its executor (batcher) and a count of the requests
 * using it. Retiring it (after a swap or an unload) lets those requests finish before the session is released.
 */
export class ModelVersion {
  readonly name: string;
  readonly version: string;
  readonly config: ModelConfig;
  readonly io: ModelIo;
  readonly recorder: ModelRecorder;
  /** What the load checked (sha256, warm-up, fixture), for load reports. */
  readonly checks: VersionChecks;
  /** The memory it is counted as within the worker's budget until it is released (memory-budget.ts). */
  readonly bytes: number;
  readonly #session: OnnxModel;
  readonly #executor: Executor;
  #leases = 0;
  #retired = false;
  #drained: () => void = () => {};
  readonly #released: Promise<void>;

  constructor(options: {
    config: ModelConfig;
    version: string;
    io: ModelIo;
    session: OnnxModel;
    executor: Executor;
    recorder: ModelRecorder;
    checks: VersionChecks;
    bytes?: number;
  }) {
    this.name = options.config.name;
    this.version = options.version;
    this.config = options.config;
    this.io = options.io;
    this.recorder = options.recorder;
    this.checks = options.checks;
    this.recorder.baseline(versionBaseline(options.config, options.version));
    this.bytes = options.bytes ?? 0;
    this.#session = options.session;
    this.#executor = options.executor;
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    this.#released = drained.then(() => {
      this.recorder.dispose();
      return this.#session.release();
    });
  }

  /** Requests holding this version now. */
  get leases(): number {
    return this.#leases;
  }

  /** Take a lease; callers must `release()` it when their response is ready. */
  lease(): Lease {
    if (this.#retired) throw new Error(`${this.name} version ${this.version} is retired`);
    this.#leases++;
    let released = false;
    return {
      model: this,
      release: () => {
        if (released) return;
        released = true;
        this.#leases--;
        if (this.#retired && this.#leases === 0) this.#drained();
      },
    };
  }

  /** Requests of this version waiting in its executor's queue or running now. */
  get submitted(): number {
    return this.#executor.pending;
  }

  /** Run `rows` for the tenant `flow` (regional/tenants/) unless `deadlineUs` passes first. */
  infer(rows: InputRows, deadlineUs: number, flow: number): Promise<Executed> {
    // The executor's own promise, not one more layer: on the pool's hot path each is an allocation and a
    // microtask per request (the executor counts what `submitted` reports).
    return this.#executor.submit(rows, deadlineUs, flow);
  }

  /**
   * A shadow run (rollouts): `batch` rows straight through the session, outside the executor, so it never
   * takes a place in the live queue. Holders must have a lease.
   */
  shadowRun(data: Float32Array, batch: number): Promise<Float32Array> {
    return this.#session.run(data, batch);
  }

  /**
   * Take no new leases; release the session once the current ones are done. Resolves when it is released.
   * The repository, which decides what serves, says so in the ready gauge; retiring does not touch it.
   */
  retire(): Promise<void> {
    if (!this.#retired) {
      this.#retired = true;
      if (this.#leases === 0) this.#drained();
    }
    return this.#released;
  }
}

/** What a version's config.json entry says it did on its held-out rows, for its metrics. */
export function versionBaseline(config: ModelConfig, version: string): VersionBaseline {
  const figures = config.versions[version]?.heldout;
  const { edgeAnswered, edgeAgreeing } = figures ?? {};
  return {
    labels: config.labels,
    ...(figures ? { classCounts: figures.classCounts } : {}),
    ...(config.standsFor && edgeAnswered !== undefined && edgeAgreeing !== undefined
      ? { cascade: { standsFor: config.standsFor, answered: edgeAnswered, agreeing: edgeAgreeing } }
      : {}),
  };
}
