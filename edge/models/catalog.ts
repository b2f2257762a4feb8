import type { ServedModels } from "../routes/model-access.ts";
import { type ModelSource, ServedModel } from "./served-model.ts";

/** The models one isolate serves, by name (built once, at the isolate's first request). */
export class ModelCatalog implements ServedModels<ServedModel> {
  readonly names: readonly string[];
  readonly #byName: ReadonlyMap<string, ServedModel>;

  constructor(sources: readonly ModelSource[]) {
    const models = sources.map((s) => new ServedModel(s));
    this.#byName = new Map(models.map((m) => [m.name, m]));
    if (this.#byName.size !== models.length) throw new Error("two bundled models have the same name");
    this.names = models.map((m) => m.name);
  }

  get(name: string): ServedModel | undefined {
    return this.#byName.get(name);
  }

  all(): ServedModel[] {
    return [...this.#byName.values()];
  }
}
