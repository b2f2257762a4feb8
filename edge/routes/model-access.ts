import { Forbidden, NotFound } from "../../protocol/errors.ts";

/** What the lookup needs of the served models: their names and each one's served version. */
export interface ServedModels<M extends { readonly servedVersion: string }> {
  get(name: string): M | undefined;
  readonly names: readonly string[];
}

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(", ") || "no model";

/**
 * The model a client names, at most at the version the edge serves: else 404 naming the models the caller
 * may call. A model the caller's API key does not cover is a 403 that says which ones it may call.
 */
export function checkModelAccess<M extends { readonly servedVersion: string }>(
  served: ServedModels<M>,
  model: string,
  version: string | undefined,
  mayCall: (name: string) => boolean = () => true,
): M {
  const found = served.get(model);
  // The list of callable models is built only for the error messages, never on the way to an answer.
  if (!found)
    throw new NotFound(`unknown model "${model}"; this endpoint serves ${quoted(served.names.filter(mayCall))}`);
  if (!mayCall(model)) {
    throw new Forbidden(
      `this API key may not call model "${model}"; it may call ${quoted(served.names.filter(mayCall))}`,
    );
  }
  if (version !== undefined && version !== found.servedVersion) {
    throw new NotFound(
      `model "${model}" has no version "${version}" here; the served version is "${found.servedVersion}"`,
    );
  }
  return found;
}
