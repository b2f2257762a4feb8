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

/**
 * Runs the model on `batch` rows of float32 features (row-major) and returns the output matrix, which the
 * caller owns. Synchronous where the runtime allows it (ort-direct.ts); runners that await keep their runs
 * from overlapping themselves.
 */
export type Runner = (data: Float32Array, batch: number) => Float32Array | Promise<Float32Array>;

export interface EdgeVariantSource {
  /** The edge model's config.json, parsed. */
  config: ModelConfig;
  /** The model file of `config.version` as bundled. */
  bytes: ArrayBuffer | Uint8Array;
  /** Builds a runner over verified model bytes (onnxruntime-web in the Worker). */
  createRunner: (bytes: Uint8Array, io: ModelIo) => Promise<Runner>;
  /** The key the file must be signed with (the Worker's MODEL_PUBLIC_KEY); none: unsigned files load. */
  publicKey?: Promise<ModelPublicKey>;
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

/**
 * An edge variant in one isolate: verified and loaded once, on first use or ahead of it (`load`, see Lazy),
 * then run.
 */
export class EdgeVariant {
  readonly config: ModelConfig;
  readonly io: ModelIo;
  readonly calibration: CascadeCalibration;
  /** `<name> v<version>`, as answers' Server-Timing names the edge model (written once, not per answer). */
  readonly label: string;
  readonly #runner: Lazy<Runner>;
  #loads = 0;

  constructor(source: EdgeVariantSource) {
    this.config = source.config;
    this.io = modelIoOf(source.config);
    this.calibration = calibrationOf(source.config);
    this.label = `${source.config.name} v${source.config.version}`;
    const bytes = source.bytes instanceof Uint8Array ? source.bytes : new Uint8Array(source.bytes);
    this.#runner = new Lazy(async () => {
      this.#loads++;
      await verifyModelBytes(source.config, bytes, source.config.version, await source.publicKey);
      return source.createRunner(bytes, this.io);
    });
  }

  /** The edge variant's own version (of `digits-edge`). */
  get version(): string {
    return this.config.version;
  }

  /** How many times loading started (1 once loaded, unless a load failed and was retried). */
  get loads(): number {
    return this.#loads;
  }

  get ready(): boolean {
    return this.#runner.ready;
  }

  /** Why loading failed last, until a load succeeds. */
  get loadError(): unknown {
    return this.#runner.lastError;
  }

  /** Load the model if it is not loaded yet; rejects if loading fails (the next call retries). */
  async load(): Promise<void> {
    await this.#runner.get();
  }

  /** Probabilities `[batch, classes]` for `batch` rows. */
  async infer(data: Float32Array, batch: number): Promise<Float32Array> {
    const runner = this.#runner.value ?? (await this.#runner.get());
    const probs = await runner(data, batch);
    if (probs.length !== batch * this.io.classes) {
      throw new Error(`${this.config.name}: expected ${batch}x${this.io.classes} outputs, got ${probs.length}`);
    }
    return probs;
  }
}
