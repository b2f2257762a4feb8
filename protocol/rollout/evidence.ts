/**
 * What pools count for a rollout's current step, summed over pool processes and regions before the tests
 * read it. Counters only (and two figures for display), so that sums are exact.
 */
export interface StepEvidence {
  /** The rollout and step these counts belong to; counts of another are never summed in. */
  id: number;
  step: number;
  /** Runs (live requests and shadow runs) of each version, and how many failed. */
  candidate: { runs: number; errors: number };
  stable: { runs: number; errors: number };
  /** Rows run by both versions in shadow, and those whose labels differed. */
  comparisons: { rows: number; disagreements: number };
  /**
   * Shadow pairs timed (both versions on the same rows), the runs in the slowest part of their blocks
   * (`config.latency`), and how many of those were the candidate's.
   */
  latency: { pairs: number; tail: number; slow: number };
  /** Live requests copied for shadow runs, run, and dropped because the shadow queue was full. */
  shadow: { offered: number; ran: number; dropped: number };
  /** Live requests answered by each version. */
  live: { stable: number; candidate: number };
  /** Shadow-run quantiles of each version, milliseconds (display only; the highest of the summed pools). */
  shadowMs: { stable: number | null; candidate: number | null };
}

export function emptyEvidence(id: number, step: number): StepEvidence {
  return {
    id,
    step,
    candidate: { runs: 0, errors: 0 },
    stable: { runs: 0, errors: 0 },
    comparisons: { rows: 0, disagreements: 0 },
    latency: { pairs: 0, tail: 0, slow: 0 },
    shadow: { offered: 0, ran: 0, dropped: 0 },
    live: { stable: 0, candidate: 0 },
    shadowMs: { stable: null, candidate: null },
  };
}

const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** The sum of two pools' evidence of the same rollout step. */
export function addEvidence(a: StepEvidence, b: StepEvidence): StepEvidence {
  if (a.id !== b.id || a.step !== b.step) {
    throw new Error(`evidence of rollout ${a.id} step ${a.step} and of rollout ${b.id} step ${b.step} do not add up`);
  }
  const sum = <T extends Record<string, number>>(x: T, y: T): T =>
    Object.fromEntries(Object.keys(x).map((k) => [k, x[k]! + y[k]!])) as T;
  return {
    id: a.id,
    step: a.step,
    candidate: sum(a.candidate, b.candidate),
    stable: sum(a.stable, b.stable),
    comparisons: sum(a.comparisons, b.comparisons),
    latency: sum(a.latency, b.latency),
    shadow: sum(a.shadow, b.shadow),
    live: sum(a.live, b.live),
    shadowMs: {
      stable: max(a.shadowMs.stable, b.shadowMs.stable),
      candidate: max(a.shadowMs.candidate, b.shadowMs.candidate),
    },
  };
}
