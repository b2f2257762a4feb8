import { describe, expect, it } from "vitest";
import { DEFAULT_ROLLOUT_CONFIG } from "./config.ts";
import { checkTransition, parseRolloutState, percentOf, type RolloutState, viewOf } from "./state.ts";

const T = "2026-12-01T00:00:00.000Z";
const running: RolloutState = {
  model: "digits",
  id: 4,
  revision: 4,
  stable: "1",
  candidate: "2",
  step: 0,
  phase: "running",
  config: DEFAULT_ROLLOUT_CONFIG,
  startedAt: T,
  stepStartedAt: T,
};
const at = (over: Partial<RolloutState>): RolloutState => ({ ...running, ...over });
const kind = (current: RolloutState | undefined, next: RolloutState, serving = "1") => {
  const check = checkTransition(current, next, serving);
  return check.ok ? check.transition.kind : `${check.status}: ${check.message}`;
};

describe("rollout states", () => {
  it("derives the percent: the step's while running, 100 promoted, 0 rolled back or none", () => {
    expect(percentOf(at({ step: 2 }))).toBe(25);
    expect(percentOf(at({ phase: "promoted" }))).toBe(100);
    expect(percentOf(at({ phase: "rolled-back", step: 3 }))).toBe(0);
    expect(percentOf(undefined)).toBe(0);
    expect(viewOf(at({ step: 1 }))).toEqual({
      id: 4,
      revision: 4,
      stable: "1",
      candidate: "2",
      phase: "running",
      percent: 5,
    });
  });

  it("checks a state sent by a client, naming the field", () => {
    expect(parseRolloutState(running)).toEqual({ ok: true, value: running });
    expect(parseRolloutState({ ...running, step: 4 })).toMatchObject({
      message: '"step" 4 is past the last of 4 steps',
    });
    expect(parseRolloutState({ ...running, candidate: "two" })).toMatchObject({
      message: '"candidate" must be a version number such as "2"',
    });
    expect(parseRolloutState({ ...running, id: 5 })).toMatchObject({ message: '"id" 5 is above "revision" 4' });
    expect(parseRolloutState({ ...running, extra: 1 })).toMatchObject({ message: 'unknown field "extra"' });
  });

  it.each<[string, RolloutState | undefined, RolloutState, string, string]>([
    ["a start", undefined, running, "1", "start"],
    ["a start after an ended rollout", at({ phase: "rolled-back" }), at({ id: 6, revision: 6 }), "1", "start"],
    ["a retry of the same state", running, running, "1", "none"],
    ["the next step", running, at({ revision: 5, step: 1 }), "1", "step"],
    ["a rollback", running, at({ revision: 5, phase: "rolled-back" }), "1", "rollback"],
    ["a promotion", running, at({ revision: 5, phase: "promoted" }), "1", "promote"],
    ["a promotion seen by a restarted pool", undefined, at({ revision: 9, phase: "promoted" }), "1", "adopt"],
    ["a promotion already served", undefined, at({ revision: 9, phase: "promoted" }), "2", "record"],
    ["a rollback seen by a restarted pool", undefined, at({ revision: 9, phase: "rolled-back" }), "1", "record"],
    ["a running rollout joined by a new pod", undefined, at({ revision: 7, step: 2 }), "1", "start"],
  ])("%s", (_what, current, next, serving, expected) => {
    expect(kind(current, next, serving)).toBe(expected);
  });

  it.each<[string, RolloutState | undefined, RolloutState, string, string]>([
    [
      "an older revision",
      at({ revision: 6 }),
      at({ revision: 5, step: 1 }),
      "1",
      "409: revision 5 is older than this pool's 6",
    ],
    [
      "another state under the same revision",
      running,
      at({ step: 1 }),
      "1",
      "409: revision 4 is already taken by another state",
    ],
    [
      "a second rollout while one runs",
      running,
      at({ id: 5, revision: 5, candidate: "3" }),
      "1",
      "409: rollout 4 (version 2) is running; promote it or roll it back first",
    ],
    ["a step back", at({ step: 2 }), at({ revision: 5, step: 1 }), "1", "409: rollout 4 is at step 2, past 1"],
    [
      "an ended rollout restarted",
      at({ phase: "rolled-back" }),
      at({ revision: 5 }),
      "1",
      "409: rollout 4 has ended (rolled-back); start a new one",
    ],
    [
      "a stable version this pool does not serve",
      undefined,
      running,
      "3",
      "409: the rollout is over version 1, and this pool serves 3",
    ],
    [
      "an older candidate",
      undefined,
      at({ stable: "2", candidate: "1" }),
      "2",
      "400: candidate version 1 is not newer than version 2: versions only move forward (import the old files as a new version to go back)",
    ],
  ])("refuses %s", (_what, current, next, serving, expected) => {
    expect(kind(current, next, serving)).toBe(expected);
  });
});
