import type { RolloutView } from "../../protocol/rollout/state.ts";
import type { Region, RequestLocation } from "../regions/region.ts";

/** One call to one region, as it passes through the forwarding layers (see compose.ts). */
export interface RegionCall {
  region: Region;
  /** Path on the region, e.g. `/v1/classify`. */
  path: string;
  /** JSON body. */
  body: string;
  /** The version the client pinned (the body names it too); an answer of another version is refused. */
  version?: string;
  /** Rows in the body; the answer must have as many. */
  batch: number;
  /** Classes of the model; each answer row must have as many scores. */
  classes: number;
  headers: Record<string, string>;
  /**
   * The edge tenant the request is for (the API key's; `anonymous` without keys): sent as `x-edgecascade-tenant`,
   * covered by the signature. None for the isolate's own calls (warm probes): the pool counts those `direct`.
   */
  tenant?: string;
  /**
   * An audit's edge labels (edge/audit/, protocol/audit.ts): sent as `x-edgecascade-audit`, covered by the
   * signature. None on a request's calls.
   */
  audit?: string;
  /** Unix ms at which the caller stops waiting: the request's start plus its budget. */
  deadlineAt: number;
  /** Where the request comes from: the reach estimate's distance prior (regions/prior.ts). */
  location?: RequestLocation;
  /**
   * Try regions whatever the reach estimate says (`cascade: "regional"`, a model without an edge variant): the
   * client asked for the full model, or nothing else can answer. Default false.
   */
  anyDistance?: boolean;
  /** A warm probe's call (edge/forward/warm-probe.ts), not a request's: its answer time is marked as such. */
  warmProbe?: boolean;
  /**
   * A warm-up request's call (`x-edgecascade-warm-up: 1`, as `npm start` sends before it says ready): counted, but
   * its time is no evidence of the region (reach estimate, hedge delay), since it measures a process still compiling.
   */
  warmUp?: boolean;
  signal?: AbortSignal;
}

/** A region's answer, checked. */
export interface RegionAnswer {
  region: string;
  /** The full model's version that answered (`x-model-version`). */
  version: string;
  /** `[batch, classes]` probabilities. */
  probs: Float32Array;
  /** Time from sending to the parsed answer, in ms (I/O time, which is what a Worker can see). */
  ms: number;
  /** The model's rollout as the region holds it (`x-edgecascade-rollout`), if it has had one. */
  rollout?: RolloutView;
  /** How long the answer waited for the model to load on demand at the region (`x-edgecascade-model-load-ms`). */
  loadMs?: number;
}

export type RegionDispatch = (call: RegionCall) => Promise<RegionAnswer>;

/** One concern wrapped around the next dispatch, as undici's interceptors are. */
export type Interceptor = (next: RegionDispatch) => RegionDispatch;
