/**
 * The shadow runner's decisions, apart from its timers and sessions (shadow.ts): whether an offered copy is
 * taken, what the runner does next, and how two versions' answers to the same rows compare.
 */

/** What happens to a copy offered with random `draw` in [0, 1): not sampled, dropped (queue full), or queued. */
export function offerDecision(
  draw: number,
  sample: number,
  waiting: number,
  maxQueue: number,
): "unsampled" | "dropped" | "queued" {
  if (draw >= sample) return "unsampled";
  return waiting >= maxQueue ? "dropped" : "queued";
}

/**
 * The runner's next move: `clear` when the rollout's two versions are gone (a rollback), `wait` while live
 * requests of either version are queued or running (shadow work never delays them), else `run` the next copy
 * (`idle` when none waits).
 */
export function nextShadowMove(
  hasPair: boolean,
  liveSubmitted: number,
  waiting: number,
): "clear" | "wait" | "run" | "idle" {
  if (!hasPair) return "clear";
  if (liveSubmitted > 0) return "wait";
  return waiting > 0 ? "run" : "idle";
}

/** Index of each row's top probability (the first on a tie). */
function topLabels(probs: Float32Array, rows: number): Int32Array {
  const classes = probs.length / rows;
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (probs[r * classes + c]! > probs[r * classes + best]!) best = c;
    out[r] = best;
  }
  return out;
}

/** Rows whose top labels differ between the two versions' outputs. */
export function disagreements(stable: Float32Array, candidate: Float32Array, rows: number): number {
  const a = topLabels(stable, rows);
  const b = topLabels(candidate, rows);
  let n = 0;
  for (let r = 0; r < rows; r++) if (a[r] !== b[r]) n++;
  return n;
}
