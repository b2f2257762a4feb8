import type { RolloutConfig } from "../../protocol/rollout/config.ts";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { describeResult, stepTests, type TestResult } from "./sequential-tests.ts";

/** What the controller does after reading one step's evidence. */
export type Decision =
  | { action: "wait"; results: TestResult[]; why: string }
  | { action: "rollback"; results: TestResult[]; reason: string }
  | { action: "advance"; results: TestResult[]; to: number }
  | { action: "promote"; results: TestResult[]; reason: string };

/**
 * The decision on a running rollout's step: any test rejecting rolls back at once (its evidence is the
 * reason); when every test has accepted and the step has lasted `minStepSeconds`, the next step, or after the
 * last one the promotion; otherwise wait for more evidence.
 */
export function decideStep(state: RolloutState, evidence: StepEvidence, nowMs: number): Decision {
  const results = stepTests(state.config, evidence);
  const breach = results.find((r) => r.verdict === "reject");
  const percent = state.config.steps[state.step]!;
  if (breach) {
    return { action: "rollback", results, reason: `at ${percent}%: ${describeResult(breach)}` };
  }
  const undecided = results.filter((r) => r.verdict !== "accept");
  if (undecided.length > 0) {
    return { action: "wait", results, why: `undecided: ${undecided.map((r) => r.test).join(", ")}` };
  }
  const elapsedS = (nowMs - Date.parse(state.stepStartedAt)) / 1000;
  if (elapsedS < state.config.minStepSeconds) {
    return {
      action: "wait",
      results,
      why: `step lasts ${state.config.minStepSeconds} s, ${elapsedS.toFixed(0)} s so far`,
    };
  }
  if (state.step + 1 < state.config.steps.length) return { action: "advance", results, to: state.step + 1 };
  return {
    action: "promote",
    results,
    reason: `every test passed at every step (${state.config.steps.join(" -> ")}%)`,
  };
}

/** A new rollout's first state, at `revision`. */
export function startState(options: {
  model: string;
  stable: string;
  candidate: string;
  config: RolloutConfig;
  revision: number;
  now: Date;
}): RolloutState {
  const at = options.now.toISOString();
  const { model, stable, candidate, config, revision } = options;
  return {
    model,
    id: revision,
    revision,
    stable,
    candidate,
    step: 0,
    phase: "running",
    config,
    startedAt: at,
    stepStartedAt: at,
  };
}

/** The state after a decision (or an operator's promote or rollback), at `revision`. */
export function nextState(
  state: RolloutState,
  change:
    | { action: "advance"; to: number }
    | { action: "promote"; reason: string }
    | { action: "rollback"; reason: string },
  revision: number,
  now: Date,
): RolloutState {
  const at = now.toISOString();
  if (change.action === "advance") return { ...state, revision, step: change.to, stepStartedAt: at };
  const phase = change.action === "promote" ? "promoted" : "rolled-back";
  return { ...state, revision, phase, reason: change.reason, endedAt: at };
}
