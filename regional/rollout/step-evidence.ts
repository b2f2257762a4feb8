import { emptyEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import { LatencyWindow } from "./latency-window.ts";

/** Stable shadow runs needed before a candidate's shadow run is timed against their quantile. */
export const MIN_BASELINE_RUNS = 50;

/** One shadow comparison: both versions ran the same rows (each failure is an error of that version). */
export interface ShadowResult {
  rows: number;
  /** Milliseconds of each version's run; undefined when it failed. */
  stableMs: number | undefined;
  candidateMs: number | undefined;
  /** Rows whose top labels differ (when both ran). */
  disagreements: number;
}

/**
 * What one pool process counts for a rollout's current step (protocol/rollout/evidence.ts): live answers by
 * version, shadow runs, comparisons, and the candidate's shadow runs timed against the stable version's
 * quantile over its own recent shadow runs. The windows outlive steps, not rollouts.
 */
export class StepCounters {
  #evidence: StepEvidence = emptyEvidence(0, 0);
  readonly #stableMs = new LatencyWindow();
  readonly #candidateMs = new LatencyWindow();
  #quantile = 0.95;

  /** Count for rollout `id`, step `step` from now on: a new step starts from zero, a new rollout's windows too. */
  at(id: number, step: number, quantile: number): void {
    if (id !== this.#evidence.id) {
      this.#stableMs.clear();
      this.#candidateMs.clear();
    }
    if (id !== this.#evidence.id || step !== this.#evidence.step) this.#evidence = emptyEvidence(id, step);
    this.#quantile = quantile;
  }

  /** A live request answered (`ok`) or failed by a version of the rollout. */
  live(role: "stable" | "candidate", ok: boolean): void {
    const e = this.#evidence;
    e.live[role]++;
    e[role].runs++;
    if (!ok) e[role].errors++;
  }

  offered(queued: boolean): void {
    this.#evidence.shadow.offered++;
    if (!queued) this.#evidence.shadow.dropped++;
  }

  shadow(result: ShadowResult): void {
    const e = this.#evidence;
    e.shadow.ran++;
    e.stable.runs++;
    e.candidate.runs++;
    if (result.stableMs === undefined) e.stable.errors++;
    else this.#stableMs.add(result.stableMs);
    if (result.candidateMs === undefined) e.candidate.errors++;
    if (result.stableMs === undefined || result.candidateMs === undefined) return;
    e.comparisons.rows += result.rows;
    e.comparisons.disagreements += result.disagreements;
    if (this.#stableMs.count >= MIN_BASELINE_RUNS) {
      e.latency.timed++;
      if (result.candidateMs > this.#stableMs.quantile(this.#quantile)!) e.latency.slow++;
    }
    this.#candidateMs.add(result.candidateMs);
  }

  /** A copy of the counts, with each version's shadow quantile. */
  snapshot(): StepEvidence {
    const e = structuredClone(this.#evidence);
    e.shadowMs = {
      stable: this.#stableMs.quantile(this.#quantile),
      candidate: this.#candidateMs.quantile(this.#quantile),
    };
    return e;
  }
}
