import type { RolloutConfig } from "../../protocol/rollout/config.ts";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { bernoulliLlr, type Verdict, verdictOf, waldBounds } from "./sprt.ts";

export type TestName = "errors" | "latency" | "agreement";

/** One sequential test on one step's summed evidence. */
export interface TestResult {
  test: TestName;
  /** What was counted, e.g. "failed runs of the candidate". */
  events: number;
  trials: number;
  p0: number;
  p1: number;
  llr: number;
  verdict: Verdict;
  /** What the minimum sample was counted in: the trials, or for latency the shadow pairs. */
  sampled: number;
}

/**
 * The three tests of a step: the candidate's error rate against the stable version's (H0: at most
 * stable + margin0, H1: at least stable + margin1, the stable rate measured in the same step: a plug-in), the
 * share of the candidate's runs among the slowest of each block of shadow pairs (H0: half), and the share of
 * rows where the two disagree.
 */
export function stepTests(config: RolloutConfig, evidence: StepEvidence): TestResult[] {
  const bounds = waldBounds(config.alpha, config.beta);
  /** `sampled`: what the minimum sample counts (the trials, or for latency the pairs they were ranked from). */
  const result = (test: TestName, events: number, trials: number, p0: number, p1: number, sampled = trials) => {
    const llr = bernoulliLlr(events, trials, p0, p1);
    const verdict = verdictOf(llr, sampled, bounds, config.minSamples);
    return { test, events, trials, p0, p1, llr, verdict, sampled } satisfies TestResult;
  };
  const { stable, candidate } = evidence;
  const stableRate = stable.runs > 0 ? stable.errors / stable.runs : 0;
  const errorP0 = Math.min(0.5, stableRate + config.errors.margin0);
  const errorP1 = Math.min(0.99, Math.max(errorP0 + 1e-6, stableRate + config.errors.margin1));
  return [
    result("errors", candidate.errors, candidate.runs, Math.max(1e-6, errorP0), errorP1),
    result("latency", evidence.latency.slow, evidence.latency.tail, 0.5, config.latency.p1, evidence.latency.pairs),
    result(
      "agreement",
      evidence.comparisons.disagreements,
      evidence.comparisons.rows,
      config.agreement.p0,
      config.agreement.p1,
    ),
  ];
}

const WHAT: Record<TestName, [string, string]> = {
  errors: ["failed", "candidate runs"],
  latency: ["the candidate's", "runs in the slowest 5% of their blocks"],
  agreement: ["disagreeing", "rows compared"],
};

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** One line of evidence, e.g. `agreement: 14 disagreeing of 402 rows compared (3.48%), H0 1.00% vs H1 3.00%, LLR 7.12 (reject)`. */
export function describeResult(r: TestResult): string {
  const [event, trial] = WHAT[r.test];
  const rate = r.trials > 0 ? ` (${pct(r.events / r.trials)})` : "";
  const pairs = r.test === "latency" ? ` of ${r.sampled} shadow pairs` : "";
  return `${r.test}: ${r.events} ${event} of ${r.trials} ${trial}${pairs}${rate}, H0 ${pct(r.p0)} vs H1 ${pct(r.p1)}, LLR ${r.llr.toFixed(2)} (${r.verdict})`;
}
