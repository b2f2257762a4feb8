/**
 * The cascade's rule, in one place: the edge variant answers a row on its own when its top probability is at
 * or above the threshold (NaN never is). The Worker's decision (edge/cascade/decision.ts), the calibration's
 * figures (tools/model/calibrate.ts) and everything that predicts the Worker from held-out rows (protocol/heldout.ts
 * `edgeAnswers`: tests, probes, benchmarks) read it here, so they cannot drift from what the edge does.
 */
export function clearsThreshold(confidence: number, threshold: number): boolean {
  return confidence >= threshold;
}

/** A request's rows at the edge: every row clears the threshold (one answer comes from one model); none is not. */
export function edgeIsConfident(confidences: readonly number[], threshold: number): boolean {
  return confidences.length > 0 && confidences.every((c) => clearsThreshold(c, threshold));
}
