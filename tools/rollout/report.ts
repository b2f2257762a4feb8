import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { percentOf, type RolloutState } from "../../protocol/rollout/state.ts";
import type { Decision } from "./decide.ts";
import { describeResult, stepTests } from "./sequential-tests.ts";

const clock = (at: Date) => at.toISOString().slice(11, 19);

/** One line naming the rollout and where it is. */
export function rolloutLine(state: RolloutState): string {
  const steps = state.config.steps.map((s, i) => (i === state.step && state.phase === "running" ? `[${s}]` : `${s}`));
  const where =
    state.phase === "running"
      ? `step ${state.step + 1} of ${steps.length} (${steps.join(" -> ")}%): ${percentOf(state)}% to the candidate`
      : `${state.phase}${state.reason ? `: ${state.reason}` : ""}`;
  return `${state.model} ${state.candidate} over ${state.stable} (rollout ${state.id}, revision ${state.revision}): ${where}`;
}

/** What the evidence of a step amounts to, one line per count and test. */
export function evidenceLines(state: RolloutState, evidence: StepEvidence): string[] {
  const e = evidence;
  const ms = (x: number | null) => (x === null ? "-" : `${x.toFixed(3)} ms`);
  return [
    `live answers: ${e.live.stable} stable, ${e.live.candidate} candidate; shadow: ${e.shadow.ran} run, ${e.shadow.dropped} dropped of ${e.shadow.offered} offered; shadow p95 ${ms(e.shadowMs.stable)} stable, ${ms(e.shadowMs.candidate)} candidate`,
    ...stepTests(state.config, e).map(describeResult),
  ];
}

/** A decision as the controller prints it: what it did, then the evidence it did it on. */
export function decisionLines(
  state: RolloutState,
  decision: Exclude<Decision, { action: "wait" }>,
  at: Date,
): string[] {
  const percent = state.config.steps[state.step]!;
  const head =
    decision.action === "advance"
      ? `${percent}% -> ${state.config.steps[decision.to]}%: every test passed at ${percent}%`
      : decision.action === "promote"
        ? `PROMOTED version ${state.candidate}: ${decision.reason}`
        : `ROLLED BACK version ${state.candidate}: ${decision.reason}`;
  return [
    `${clock(at)} ${state.model} ${state.candidate}: ${head}`,
    ...decision.results.map((r) => `  ${describeResult(r)}`),
  ];
}

/** What an operator must do so that a restarted pool keeps serving a promoted version. */
export function promotionNote(state: RolloutState): string {
  return (
    `the pools serve ${state.model} version ${state.candidate} from memory: to keep it after restarts, set "version": "${state.candidate}" ` +
    `in models/${state.model}/config.json (and its edge variant's, if one was calibrated against it), build and deploy the image ` +
    `(docs/rollouts.md: After a promotion). Until then a restarted pool serves version ${state.stable}; ` +
    "`npm run rollout -- run` or `sync` brings it back to the promoted version."
  );
}
