import type { ModelConfig } from "../model-config.ts";
import { type RolloutView, viewOf } from "../rollout/state.ts";
import type { ServedState } from "./served-state.ts";

/**
 * What every Worker isolate needs of the registry, as one small document in the `REGION_STATUS` KV namespace
 * (key `served`), written by the Worker's cron from the registry's R2 bucket and read by isolates memoised:
 * per logical model, the served version and rollout, and the edge variant version that stands for it with the
 * config entry its file is checked against. The `.onnx` itself is read from R2 only by an isolate that loads it.
 */
export interface EdgeServedView {
  /** Unix ms when the cron read the registry. */
  at: number;
  models: Record<string, EdgeServedModel>;
  /** Models whose state could not be read at `at`, with why (the isolates keep what they hold for those). */
  errors?: Record<string, string>;
}

export interface EdgeServedModel {
  revision: number;
  version: string;
  rollout?: RolloutView;
  /** The edge variant to serve, when the registry has one for this version (else the isolate keeps its own). */
  edge?: { config: ModelConfig; version: string };
}

/** The KV key of the view, beside the region status report's. */
export const EDGE_SERVED_KEY = "served";

const newer = (a: string, b: string) => BigInt(a) > BigInt(b);

/**
 * The edge variant version that stands for `fullVersion` of its model: the newest one calibrated against that
 * version (`cascade.against`), else the newest calibrated against an older one (a new full version without a
 * new edge variant keeps the last one, as before the registry), else none.
 */
export function edgeVersionFor(edge: ModelConfig, fullVersion: string): string | undefined {
  let exact: string | undefined;
  let older: string | undefined;
  for (const [version, entry] of Object.entries(edge.versions)) {
    const against = entry.cascade?.against.version;
    if (against === undefined || !/^\d+$/.test(against)) continue;
    if (against === fullVersion) {
      if (exact === undefined || newer(version, exact)) exact = version;
    } else if (!newer(against, fullVersion) && (older === undefined || newer(version, older))) {
      older = version;
    }
  }
  return exact ?? older;
}

/** One logical model's entry of the view, from its served state and its edge variant's registry config. */
export function edgeServedModel(served: ServedState, edge: ModelConfig | undefined): EdgeServedModel {
  const version = edge ? edgeVersionFor(edge, served.version) : undefined;
  return {
    revision: served.revision,
    version: served.version,
    ...(served.rollout ? { rollout: viewOf(served.rollout) } : {}),
    ...(edge && version ? { edge: { config: { ...edge, version }, version } } : {}),
  };
}

/** A view read from KV, if it has the shape of one (anything else reads as none). */
export function asEdgeServedView(raw: unknown): EdgeServedView | undefined {
  const view = raw as Partial<EdgeServedView> | null;
  if (!view || typeof view.at !== "number" || typeof view.models !== "object" || view.models === null) return undefined;
  return view as EdgeServedView;
}
