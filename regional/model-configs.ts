import { NotFound } from "../protocol/errors.ts";
import { describeModel, type ModelConfig, type ModelIo, modelIoOf } from "../protocol/model-config.ts";
import type { ModelMetadata } from "../protocol/types.ts";

/**
 * Every model's config.json as last read (discovery, loads, a rewrite by the registry's follower): what a model
 * takes and answers whether it is loaded or not, so that a model loaded on demand is described, and a request
 * for it checked, without loading it.
 */
export class ModelConfigs {
  readonly #configs = new Map<string, ModelConfig>();
  readonly #read: (name: string) => Promise<ModelConfig>;

  /** `read`: a model's config.json as it is on disk now. */
  constructor(read: (name: string) => Promise<ModelConfig>) {
    this.#read = read;
  }

  set(config: ModelConfig): void {
    this.#configs.set(config.name, config);
  }

  /** `name`'s config.json read again from disk, and kept. */
  async reread(name: string): Promise<ModelConfig> {
    const config = await this.#read(name);
    this.set(config);
    return config;
  }

  /** `name`'s inputs and outputs, if its config was read. */
  io(name: string): ModelIo | undefined {
    const config = this.#configs.get(name);
    return config && modelIoOf(config);
  }

  /**
   * v2 metadata of `name` from its config (the version it names; 404 for another), if it was read: a model not
   * loaded is described by what its next load will serve.
   */
  metadata(name: string, version?: string): ModelMetadata | undefined {
    const config = this.#configs.get(name);
    if (!config) return undefined;
    if (version !== undefined && version !== config.version) {
      throw new NotFound(`model "${name}" version ${version} is not served; version ${config.version} is`);
    }
    return describeModel(config, [config.version], name);
  }
}
