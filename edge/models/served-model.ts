import { sha256Bytes } from "../../protocol/digest.ts";
import { describeModel, type ModelConfig, type ModelIo, modelIoOf } from "../../protocol/model-config.ts";
import { assignmentBytes, bucketOf, canaryVersion } from "../../protocol/rollout/assignment.ts";
import type { RolloutView } from "../../protocol/rollout/state.ts";
import type { ModelMetadata } from "../../protocol/types.ts";
import { newerVersion } from "../cascade/served-version.ts";
import type { EdgeVariant } from "../inference/edge-variant.ts";

/** A bundled model: the full model's config, its edge variant if it has one, demo samples (read when asked). */
export interface ModelSource {
  config: ModelConfig;
  edge: EdgeVariant | undefined;
  samples: () => readonly { input: number[]; label: number }[];
}

/**
 * One logical model as an isolate serves it. Clients name it; its config (not code) gives the input width,
 * the classes and the labels requests are checked against. With an edge variant the cascade may answer at
 * the edge; without one every request is forwarded (the cache still applies). It also keeps the full
 * model version the edge believes the regions serve, part of every cache key: the config's at first, then
 * only moving forward as regions answer or the region status check sees newer versions.
 */
export class ServedModel {
  readonly name: string;
  readonly config: ModelConfig;
  readonly io: ModelIo;
  #edge: EdgeVariant | undefined;
  readonly samples: ModelSource["samples"];
  #servedVersion: string;
  /** The newest rollout state the regions reported (answers' headers, the region status check), by revision. */
  #rollout: RolloutView | undefined;

  constructor(source: ModelSource) {
    this.name = source.config.name;
    this.config = source.config;
    this.io = modelIoOf(source.config);
    this.samples = source.samples;
    this.#servedVersion = source.config.version;
    if (source.edge) this.#checkFits(source.edge);
    this.#edge = source.edge;
  }

  #checkFits(edge: EdgeVariant): void {
    const { width, classes } = edge.io;
    if (width !== this.io.width || classes !== this.io.classes) {
      throw new Error(
        `${edge.config.name} takes ${width} features into ${classes} classes; ${this.name} takes ${this.io.width} into ${this.io.classes}`,
      );
    }
  }

  /** The edge variant standing in for the model now: the bundled one, or one loaded from the registry since. */
  get edge(): EdgeVariant | undefined {
    return this.#edge;
  }

  /**
   * Serve `edge` from now on (a variant loaded and checked off the request path, edge/registry/): one
   * assignment, so a request sees the old variant or the new one, never half of either. Throws when it does not
   * take the model's inputs and outputs.
   */
  swapEdge(edge: EdgeVariant): void {
    this.#checkFits(edge);
    this.#edge = edge;
  }

  /** The revision of the registry's served state this isolate follows (0: none seen; regions' answers lead). */
  #registryRevision = 0;

  /**
   * The registry's served state (edge/registry/): from now on it says the served version, which may go back
   * (a rollback of a promotion), and regions' answers no longer raise it (a region that lags answers with the old
   * version). Older revisions are ignored.
   */
  seeServedState(state: { revision: number; version: string; rollout?: RolloutView }): void {
    if (state.revision <= this.#registryRevision) return;
    this.#registryRevision = state.revision;
    this.#servedVersion = state.version;
    this.seeRollout(state.rollout);
  }

  get registryRevision(): number {
    return this.#registryRevision;
  }

  get servedVersion(): string {
    return this.#servedVersion;
  }

  /**
   * A region answered with (or the region status check saw) `version`; the served version only moves forward. A canary's
   * candidate answering is not a new served version (it serves only the inputs that hash into the canary).
   */
  seeVersion(version: string | undefined): void {
    if (this.#registryRevision > 0) return;
    const rollout = this.#rollout;
    if (rollout?.phase === "running" && version === rollout.candidate) return;
    this.#servedVersion = newerVersion(this.#servedVersion, version);
  }

  get rollout(): RolloutView | undefined {
    return this.#rollout;
  }

  /** A region reported its rollout of this model; the newest revision wins, as at the controller. */
  seeRollout(view: RolloutView | undefined): void {
    if (view && (!this.#rollout || view.revision > this.#rollout.revision)) this.#rollout = view;
  }

  /**
   * The version the regions answer `rows` with: during a canary, the candidate for inputs that hash into its
   * share (the pools' own assignment, protocol/rollout/assignment.ts), else the served version. The cache
   * looks answers up under it, so a repeat finds the answer of the version that produced it. At once (no
   * promise) unless a canary splits the inputs: only then is a digest taken.
   */
  versionFor(rows: Float32Array): string | Promise<string> {
    const rollout = this.#rollout;
    if (rollout?.phase !== "running" || rollout.percent <= 0 || rollout.stable !== this.#servedVersion) {
      return this.#servedVersion;
    }
    if (rollout.percent >= 100) return rollout.candidate;
    return this.#canaryVersion(rows, rollout);
  }

  async #canaryVersion(rows: Float32Array, rollout: RolloutView): Promise<string> {
    const digest = await sha256Bytes(assignmentBytes(this.name, rollout.candidate, rows));
    return canaryVersion(bucketOf(digest), rollout);
  }

  /** v2 model metadata: the full model's tensors and labels, at the served version. */
  describe(): ModelMetadata {
    return describeModel(this.config, [this.#servedVersion]);
  }
}
