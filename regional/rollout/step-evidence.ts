import { emptyEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import { ShadowDurations } from "./shadow-durations.ts";

/** How a rollout compares latencies: (config.latency) the quantile above which runs count, pairs per block. */
export interface LatencyRanks {
  quantile: number;
  block: number;
}

/** How many of a block's 2 x `block` runs are its slowest above `quantile`: at least one. */
export function tailSize({ quantile, block }: LatencyRanks): number {
  return Math.max(1, Math.round((1 - quantile) * 2 * block));
}

/**
 * The slowest `tailSize` of a block of pairs, and how many of them were the candidate's. Durations are
 * compared across both versions only inside the block: load that comes and goes slows both alike.
 */
export function rankBlock(pairs: readonly { stableMs: number; candidateMs: number }[], tail: number): number {
  const runs = pairs.flatMap((p) => [
    { ms: p.stableMs, candidate: false },
    { ms: p.candidateMs, candidate: true },
  ]);
  // Slowest first; a tie counts for the stable version (the candidate is not blamed for it).
  runs.sort((a, b) => b.ms - a.ms || Number(a.candidate) - Number(b.candidate));
  return runs.slice(0, tail).filter((r) => r.candidate).length;
}

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
 * version, shadow runs, comparisons, and the latency ranks of each block of shadow pairs. The windows of
 * recent shadow durations (for display) outlive steps, not rollouts.
 */
export class StepCounters {
  #evidence: StepEvidence = emptyEvidence(0, 0);
  readonly #stableMs = new ShadowDurations();
  readonly #candidateMs = new ShadowDurations();
  #ranks: LatencyRanks = { quantile: 0.95, block: 20 };
  #block: { stableMs: number; candidateMs: number }[] = [];

  /** Count for rollout `id`, step `step` from now on: a new step starts from zero, a new rollout's windows too. */
  at(id: number, step: number, ranks: LatencyRanks): void {
    if (id !== this.#evidence.id) {
      this.#stableMs.clear();
      this.#candidateMs.clear();
    }
    if (id !== this.#evidence.id || step !== this.#evidence.step) {
      this.#evidence = emptyEvidence(id, step);
      this.#block = [];
    }
    this.#ranks = ranks;
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
    this.#candidateMs.add(result.candidateMs);
    e.latency.pairs++;
    this.#block.push({ stableMs: result.stableMs, candidateMs: result.candidateMs });
    if (this.#block.length >= this.#ranks.block) {
      const tail = tailSize(this.#ranks);
      e.latency.tail += tail;
      e.latency.slow += rankBlock(this.#block, tail);
      this.#block = [];
    }
  }

  /** A copy of the counts, with each version's shadow quantile. */
  snapshot(): StepEvidence {
    const e = structuredClone(this.#evidence);
    const q = this.#ranks.quantile;
    e.shadowMs = { stable: this.#stableMs.quantile(q), candidate: this.#candidateMs.quantile(q) };
    return e;
  }
}
