import { describe, expect, it } from "vitest";
import { rolloutConfig } from "../../protocol/rollout/config.ts";
import { emptyEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import { decideStep, nextState, startState } from "./decide.ts";

const T0 = new Date("2026-12-01T00:00:00Z");
const config = rolloutConfig({ minSamples: 100 });
const state = startState({ model: "digits", stable: "1", candidate: "2", config, revision: 7, now: T0 });

/** Evidence of `n` clean shadow comparisons (and runs) at the current step, with changes on top. */
function evidence(n: number, change: (e: StepEvidence) => void = () => {}): StepEvidence {
  const e = emptyEvidence(state.id, state.step);
  e.candidate.runs = n;
  e.stable.runs = n;
  e.comparisons.rows = n;
  e.latency.pairs = n;
  // Each block of 20 pairs ranks its 2 slowest runs; an identical candidate's share of them is half.
  e.latency.tail = 2 * Math.floor(n / 20);
  e.latency.slow = e.latency.tail / 2;
  change(e);
  return e;
}

describe("decideStep", () => {
  it("waits while a test is undecided", () => {
    const d = decideStep(state, evidence(50), T0.getTime());
    expect(d).toMatchObject({ action: "wait", why: "undecided: errors, latency, agreement" });
  });

  it("advances when every test accepted, and promotes after the last step", () => {
    expect(decideStep(state, evidence(1000), T0.getTime())).toMatchObject({ action: "advance", to: 1 });
    const last = { ...state, step: 3 };
    expect(decideStep(last, { ...evidence(1000), step: 3 }, T0.getTime())).toMatchObject({
      action: "promote",
      reason: "every test passed at every step (1 -> 5 -> 25 -> 100%)",
    });
  });

  it("rolls back at once on a breach, with the test's evidence as the reason", () => {
    const d = decideStep(
      state,
      evidence(300, (e) => (e.comparisons.disagreements = 20)),
      T0.getTime(),
    );
    expect(d.action).toBe("rollback");
    expect(d.action === "rollback" && d.reason).toMatch(
      /^at 1%: agreement: 20 disagreeing of 300 rows compared \(6\.67%\), H0 1\.00% vs H1 3\.00%, LLR \d+\.\d\d \(reject\)$/,
    );
    const slow = decideStep(
      state,
      evidence(200, (e) => (e.latency.slow = 20)),
      T0.getTime(),
    );
    expect(slow.action === "rollback" && slow.reason).toMatch(
      /latency: 20 the candidate's of 20 runs in the slowest 5% of their blocks of 200 shadow pairs \(100\.00%\), H0 50\.00% vs H1 75\.00%/,
    );
  });

  it("measures the error test against the stable version's own rate", () => {
    // 2% failing on both sides: no breach (H0 is stable + 0.1%).
    const both = evidence(4000, (e) => {
      e.candidate.errors = 80;
      e.stable.errors = 80;
    });
    expect(decideStep(state, both, T0.getTime()).results[0]).toMatchObject({ test: "errors", verdict: "accept" });
    const worse = evidence(4000, (e) => {
      e.candidate.errors = 160;
      e.stable.errors = 80;
    });
    expect(decideStep(state, worse, T0.getTime()).results[0]).toMatchObject({ test: "errors", verdict: "reject" });
  });

  it("holds a step for its minimum duration", () => {
    const slowSteps = { ...state, config: { ...config, minStepSeconds: 60 } };
    expect(decideStep(slowSteps, evidence(1000), T0.getTime() + 30_000)).toMatchObject({
      action: "wait",
      why: "step lasts 60 s, 30 s so far",
    });
    expect(decideStep(slowSteps, evidence(1000), T0.getTime() + 60_000).action).toBe("advance");
  });

  it("moves the state: a new revision per change, the reason and time of the end", () => {
    const t1 = new Date(T0.getTime() + 1000);
    expect(nextState(state, { action: "advance", to: 1 }, 8, t1)).toMatchObject({
      revision: 8,
      id: 7,
      step: 1,
      stepStartedAt: t1.toISOString(),
      phase: "running",
    });
    expect(nextState(state, { action: "rollback", reason: "manual" }, 9, t1)).toMatchObject({
      phase: "rolled-back",
      reason: "manual",
      endedAt: t1.toISOString(),
    });
  });
});
