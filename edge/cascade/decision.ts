import { edgeIsConfident } from "../../protocol/cascade-rule.ts";
import type { CascadeMode } from "../../protocol/types.ts";

/** Which model answers a request. */
export type Tier = "edge" | "regional";

/**
 * Who answers: with `auto`, the edge when its top confidence clears the calibrated threshold on every
 * row of the request (protocol/cascade-rule.ts), otherwise the full model for the whole batch (one answer comes from one model, so
 * `servedBy` stays true for every prediction in it). `edge` and `regional` force a tier.
 *
 * @param confidences the edge model's top probability per row; unused unless `mode` is `auto`
 * @param threshold the edge model's calibrated threshold, from its config, or its CASCADE_THRESHOLDS override
 */
export function cascadeDecision(confidences: readonly number[], threshold: number, mode: CascadeMode): Tier {
  if (mode !== "auto") return mode;
  return edgeIsConfident(confidences, threshold) ? "edge" : "regional";
}
