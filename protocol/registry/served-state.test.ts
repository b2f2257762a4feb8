import { describe, expect, it } from "vitest";
import { DEFAULT_ROLLOUT_CONFIG } from "../rollout/config.ts";
import type { RolloutState } from "../rollout/state.ts";
import {
  firstServedState,
  nextRevision,
  parseServedState,
  rolledBackFromPromotion,
  servedVersionOf,
  withRollout,
} from "./served-state.ts";

const at = new Date("2026-12-01T10:00:00Z");
const running = (revision: number): RolloutState => ({
  model: "digits",
  id: revision,
  revision,
  stable: "1",
  candidate: "2",
  step: 0,
  phase: "running",
  config: DEFAULT_ROLLOUT_CONFIG,
  startedAt: at.toISOString(),
  stepStartedAt: at.toISOString(),
});

describe("served state", () => {
  it("moves through a rollout at one revision per write, serving the candidate only once promoted", () => {
    const first = firstServedState("digits", "1", at);
    expect(first).toMatchObject({ revision: 1, version: "1" });
    const started = withRollout(first, running(nextRevision(first)), at);
    expect(started).toMatchObject({ revision: 2, version: "1", rollout: { id: 2, phase: "running" } });
    const promoted = withRollout(
      started,
      { ...started.rollout!, revision: 3, phase: "promoted", reason: "all passed" },
      at,
    );
    expect(promoted).toMatchObject({ revision: 3, version: "2", reason: "all passed" });
    const back = rolledBackFromPromotion(promoted, "bad in production", at);
    expect(back).toMatchObject({ revision: 4, version: "1", rollout: { id: 2, revision: 4, phase: "rolled-back" } });
    expect(parseServedState(JSON.parse(JSON.stringify(back)))).toEqual({ ok: true, value: back });
  });

  it("refuses a write out of order and a rollback with nothing promoted", () => {
    const first = firstServedState("digits", "1", at);
    expect(() => withRollout(first, running(5), at)).toThrow(/not the next of digits's 1/);
    expect(() => rolledBackFromPromotion(first, "x", at)).toThrow(/no promoted rollout/);
  });

  it("refuses a served.json whose version is not the one its rollout serves, naming the field", () => {
    const started = withRollout(firstServedState("digits", "1", at), running(2), at);
    expect(parseServedState({ ...started, version: "2" })).toEqual({
      ok: false,
      message: '"version" 2 is not the one rollout 2 serves (1)',
    });
    expect(parseServedState({ ...started, revision: 1 })).toMatchObject({
      ok: false,
      message: /"rollout.revision" 2 is above/,
    });
    expect(parseServedState({ ...started, extra: 1 })).toMatchObject({ ok: false, message: /unknown field "extra"/ });
    expect(servedVersionOf({ ...running(2), phase: "rolled-back" })).toBe("1");
  });
});
