import { describe, expect, it } from "vitest";
import { firstServedState, rolledBackFromPromotion, withRollout } from "../../protocol/registry/served-state.ts";
import { DEFAULT_ROLLOUT_CONFIG } from "../../protocol/rollout/config.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { followSteps, versionsNeeded } from "./follow-policy.ts";

const at = new Date("2026-12-01T10:00:00Z");
const first = firstServedState("digits", "1", at);
const start: RolloutState = {
  model: "digits",
  id: 2,
  revision: 2,
  stable: "1",
  candidate: "2",
  step: 0,
  phase: "running",
  config: DEFAULT_ROLLOUT_CONFIG,
  startedAt: at.toISOString(),
  stepStartedAt: at.toISOString(),
};
const started = withRollout(first, start, at);
const stepped = withRollout(started, { ...start, revision: 3, step: 1 }, at);
const promoted = withRollout(stepped, { ...start, revision: 4, step: 1, phase: "promoted" }, at);
const back = rolledBackFromPromotion(promoted, "bad", at);

describe("a pool process following the served state", () => {
  it("does nothing when it serves the state already", () => {
    expect(followSteps(first, { serving: "1", rollout: undefined })).toEqual([]);
    expect(followSteps(stepped, { serving: "1", rollout: stepped.rollout })).toEqual([]);
  });

  it("starts, steps and promotes a rollout it holds, as the controller's calls did", () => {
    expect(followSteps(started, { serving: "1", rollout: undefined })).toEqual([
      { type: "rollout", state: started.rollout },
    ]);
    expect(followSteps(stepped, { serving: "1", rollout: started.rollout })).toEqual([
      { type: "rollout", state: stepped.rollout },
    ]);
    expect(followSteps(promoted, { serving: "1", rollout: stepped.rollout })).toEqual([
      { type: "rollout", state: promoted.rollout },
    ]);
  });

  it("comes back from a restart serving what the registry says, before taking its rollout on", () => {
    // A new pod from an old image (its models/ say 1) mid-canary, and after a promotion.
    expect(followSteps(stepped, { serving: undefined, rollout: undefined })).toEqual([
      { type: "load", version: "1" },
      { type: "rollout", state: stepped.rollout },
    ]);
    expect(followSteps(promoted, { serving: "1", rollout: undefined })).toEqual([
      { type: "load", version: "2" },
      { type: "rollout", state: promoted.rollout },
    ]);
    expect(versionsNeeded(stepped)).toEqual(["1", "2"]);
    expect(versionsNeeded(promoted)).toEqual(["2"]);
  });

  it("leaves a model loaded on demand, and not loaded now, to its next request, unless a canary needs it", () => {
    const notLoaded = { serving: undefined, rollout: undefined, loadsOnDemand: true };
    expect(followSteps(first, notLoaded)).toEqual([]);
    expect(followSteps(promoted, notLoaded)).toEqual([]);
    expect(followSteps(back, { ...notLoaded, rollout: promoted.rollout })).toEqual([]);
    // A running rollout: the served version loads first (within the budget), then the candidate beside it.
    expect(followSteps(stepped, notLoaded)).toEqual([
      { type: "load", version: "1" },
      { type: "rollout", state: stepped.rollout },
    ]);
  });

  it("swaps the stable version back in when a promotion is rolled back", () => {
    expect(followSteps(back, { serving: "2", rollout: promoted.rollout })).toEqual([
      { type: "load", version: "1" },
      { type: "rollout", state: back.rollout },
    ]);
  });

  it("rolls back a candidate it runs before serving anything else", () => {
    const rolledBack = withRollout(stepped, { ...start, revision: 4, step: 1, phase: "rolled-back" }, at);
    expect(followSteps(rolledBack, { serving: "1", rollout: stepped.rollout })).toEqual([
      { type: "rollout", state: rolledBack.rollout },
    ]);
  });

  it("ends a rollout it missed the end of before it takes the next one on", () => {
    // The pod ran rollout 2 at step 1 (revision 3); meanwhile 2 was promoted (revision 4) and rollout 5 of
    // version 3 over 2 started (revision 5).
    const next = withRollout(promoted, { ...start, id: 5, revision: 5, stable: "2", candidate: "3" }, at);
    const steps = followSteps(next, { serving: "1", rollout: stepped.rollout });
    const named = steps.map((s) =>
      s.type === "load" ? `load ${s.version}` : `${s.state.phase} ${s.state.id}@${s.state.revision}`,
    );
    expect(named).toEqual(["promoted 2@4", "running 5@5"]);
    // Had 2 been rolled back instead, the pod serves 1 still and drops its candidate first.
    const afterRollback = withRollout(
      withRollout(stepped, { ...start, revision: 4, step: 1, phase: "rolled-back" }, at),
      { ...start, id: 5, revision: 5, stable: "1", candidate: "3" },
      at,
    );
    expect(
      followSteps(afterRollback, { serving: "1", rollout: stepped.rollout }).map((s) =>
        s.type === "rollout" ? s.state.phase : s.type,
      ),
    ).toEqual(["rolled-back", "running"]);
  });
});
