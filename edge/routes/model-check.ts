import { NotFound } from "../../protocol/errors.ts";

/** What the edge serves: the logical model clients name and the full model version it believes current. */
export interface ServedModel {
  readonly modelName: string;
  readonly servedVersion: string;
}

/** Clients name the logical model (`digits`) and at most the version the edge serves; anything else is a 404. */
export function checkModel(served: ServedModel, model: string, version: string | undefined): void {
  const { modelName, servedVersion } = served;
  if (model !== modelName) throw new NotFound(`unknown model "${model}"; this endpoint serves "${modelName}"`);
  if (version !== undefined && version !== servedVersion) {
    throw new NotFound(`model "${model}" has no version "${version}" here; the served version is "${servedVersion}"`);
  }
}
