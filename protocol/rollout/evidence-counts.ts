import { emptyEvidence, type StepEvidence } from "./evidence.ts";

/**
 * A step's evidence as named counts: how the pools export it to Prometheus (`edgecascade_rollout_step_evidence`,
 * label `count`) and how the controller reads it back from a query summed over pods. The shadow durations are
 * for display only and are not exported.
 */
const COUNTS = {
  candidate_runs: [(e) => e.candidate.runs, (e, n) => (e.candidate.runs = n)],
  candidate_errors: [(e) => e.candidate.errors, (e, n) => (e.candidate.errors = n)],
  stable_runs: [(e) => e.stable.runs, (e, n) => (e.stable.runs = n)],
  stable_errors: [(e) => e.stable.errors, (e, n) => (e.stable.errors = n)],
  compared_rows: [(e) => e.comparisons.rows, (e, n) => (e.comparisons.rows = n)],
  disagreeing_rows: [(e) => e.comparisons.disagreements, (e, n) => (e.comparisons.disagreements = n)],
  latency_pairs: [(e) => e.latency.pairs, (e, n) => (e.latency.pairs = n)],
  latency_tail: [(e) => e.latency.tail, (e, n) => (e.latency.tail = n)],
  latency_slow: [(e) => e.latency.slow, (e, n) => (e.latency.slow = n)],
  shadow_offered: [(e) => e.shadow.offered, (e, n) => (e.shadow.offered = n)],
  shadow_ran: [(e) => e.shadow.ran, (e, n) => (e.shadow.ran = n)],
  shadow_dropped: [(e) => e.shadow.dropped, (e, n) => (e.shadow.dropped = n)],
  live_stable: [(e) => e.live.stable, (e, n) => (e.live.stable = n)],
  live_candidate: [(e) => e.live.candidate, (e, n) => (e.live.candidate = n)],
} satisfies Record<string, [(e: StepEvidence) => number, (e: StepEvidence, n: number) => void]>;

export type EvidenceCount = keyof typeof COUNTS;
export const EVIDENCE_COUNTS = Object.keys(COUNTS) as EvidenceCount[];

/** Every count of `evidence`, by name. */
export function evidenceCounts(evidence: StepEvidence): Record<EvidenceCount, number> {
  return Object.fromEntries(EVIDENCE_COUNTS.map((k) => [k, COUNTS[k][0](evidence)])) as Record<EvidenceCount, number>;
}

/** Evidence of rollout `id`, step `step` from named counts (unknown names ignored, missing ones 0). */
export function evidenceFromCounts(id: number, step: number, counts: Readonly<Record<string, number>>): StepEvidence {
  const e = emptyEvidence(id, step);
  for (const k of EVIDENCE_COUNTS) if (Number.isFinite(counts[k])) COUNTS[k][1](e, counts[k]!);
  return e;
}
