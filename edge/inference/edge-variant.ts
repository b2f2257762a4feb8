import { inFixedBatches } from "../../protocol/fixed-batch.ts";
import {
  type CascadeCalibration,
  calibrationOf,
  type ModelConfig,
  type ModelIo,
  modelIoOf,
} from "../../protocol/model-config.ts";
import { checkModelFile, modelFileProblem } from "../../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../../protocol/model-signature.ts";
import { Lazy } from "./lazy.ts";
import { edgeSessionBytes, type PooledModel, SessionPool } from "./session-pool.ts";

/**
 * Runs the model on `batch` rows of float32 features (row-major) and returns the output matrix, which the
 * caller owns. Synchronous where the runtime allows it (ort-direct.ts); runners that await keep their runs
 * from overlapping themselves.
 */
export type Runner = (data: Float32Array, batch: number) => Float32Array | Promise<Float32Array>;

/** A model's session in the isolate: its runs, and its release (every byte it holds given back). */
export interface EdgeSession {
  run: Runner;
  /** Resolves once released (after a run under way); runs after it fail. */
  release(): Promise<void>;
}

export interface EdgeVariantSource {
  /** The edge model's config.json, parsed. */
  config: ModelConfig;
  /**
   * The model file of `config.version`: the bytes, or where they come from (the bundle today; a registry, read on
   * the session's first creation, is another source of the same shape). Checked against the config either way.
   */
  bytes: ArrayBuffer | Uint8Array | (() => Promise<Uint8Array>);
  /** Builds a session over verified model bytes (onnxruntime-web in the Worker). */
  createSession: (bytes: Uint8Array, io: ModelIo) => Promise<EdgeSession>;
  /** The key the file must be signed with (the Worker's MODEL_PUBLIC_KEY); none: unsigned files load. */
  publicKey?: Promise<ModelPublicKey>;
  /** The isolate's sessions within their memory budget; default: a pool of its own without a limit. */
  pool?: SessionPool;
  /** The file's size when `bytes` is a source (what the pool counts the session as); default: the bytes'. */
  fileBytes?: number;
}

/**
 * Refuse model bytes whose size or SHA-256 differ from what the config lists for that version, and, given a
 * public key, a file that is unsigned, signed by another key or altered: the pools' and the tools' one check
 * (protocol/model-file-check.ts).
 */
export async function verifyModelBytes(
  config: ModelConfig,
  bytes: Uint8Array,
  version = config.version,
  publicKey?: ModelPublicKey,
): Promise<void> {
  const entry = config.versions[version];
  if (!entry) throw new Error(`${config.name}: version ${version} is not in config.json`);
  const problem = modelFileProblem(await checkModelFile(bytes, config.name, version, entry, publicKey));
  if (problem) throw new Error(`${problem}; the edge model will not load`);
}

/** Bytes of a source: as given, or read from where they come from. */
async function readBytes(bytes: EdgeVariantSource["bytes"]): Promise<Uint8Array> {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  return bytes();
}

/**
 * An edge variant in one isolate: its session created on first use or ahead of it (`load`, see Lazy), within
 * the isolate's session budget (session-pool.ts: room is made first by evicting the least recently used
 * sessions), its bytes verified before every creation; then run. An evicted session is created again on the
 * model's next use.
 */
export class EdgeVariant implements PooledModel {
  readonly config: ModelConfig;
  readonly io: ModelIo;
  readonly calibration: CascadeCalibration;
  /** `<name> v<version>`, as answers' Server-Timing names the edge model (written once, not per answer). */
  readonly label: string;
  /** What its session is counted as within EDGE_SESSION_MEMORY_MB. */
  readonly bytes: number;
  readonly #session: Lazy<EdgeSession>;
  readonly #pool: SessionPool;
  #loads = 0;
  #evictions = 0;

  constructor(source: EdgeVariantSource) {
    this.config = source.config;
    this.io = modelIoOf(source.config);
    this.calibration = calibrationOf(source.config);
    this.label = `${source.config.name} v${source.config.version}`;
    const fileBytes =
      source.fileBytes ??
      (typeof source.bytes === "function"
        ? source.config.versions[source.config.version]!.bytes
        : source.bytes.byteLength);
    this.bytes = edgeSessionBytes(fileBytes);
    this.#pool = source.pool ?? new SessionPool(Number.POSITIVE_INFINITY);
    this.#session = new Lazy(() => {
      this.#loads++;
      return this.#pool.create(this, async () => {
        const bytes = await readBytes(source.bytes);
        await verifyModelBytes(source.config, bytes, source.config.version, await source.publicKey);
        const session = await source.createSession(bytes, this.io);
        const { fixedBatch, width, classes } = this.io;
        // A graph with a fixed batch runs a request's rows in runs of exactly that many (protocol/fixed-batch.ts).
        return fixedBatch === undefined
          ? session
          : { ...session, run: inFixedBatches(session.run, fixedBatch, width, classes) };
      });
    });
  }

  get name(): string {
    return this.config.name;
  }

  /** The edge variant's own version (of `digits-edge`). */
  get version(): string {
    return this.config.version;
  }

  /** How many times loading started (1 once loaded, unless a load failed and was retried). */
  get loads(): number {
    return this.#loads;
  }

  /** How many times its session was evicted to make room for another. */
  get evictions(): number {
    return this.#evictions;
  }

  /** Whether its session exists now (a request can run it at once). */
  get ready(): boolean {
    return this.#session.ready;
  }

  /** Why loading failed last, until a load succeeds. */
  get loadError(): unknown {
    return this.#session.lastError;
  }

  /** Load the model if it is not loaded yet; rejects if loading fails (the next call retries). */
  async load(): Promise<void> {
    await this.#session.get();
  }

  /** The pool evicts the session: forgotten first (the next use creates it again), then released. */
  async evict(): Promise<void> {
    const session = this.#session.reset();
    if (!session) return;
    this.#evictions++;
    await session.release();
  }

  /** Probabilities `[batch, classes]` for `batch` rows. */
  async infer(data: Float32Array, batch: number): Promise<Float32Array> {
    const session = this.#session.value ?? (await this.#session.get());
    this.#pool.touch(this);
    const probs = await session.run(data, batch);
    if (probs.length !== batch * this.io.classes) {
      throw new Error(`${this.config.name}: expected ${batch}x${this.io.classes} outputs, got ${probs.length}`);
    }
    return probs;
  }
}
