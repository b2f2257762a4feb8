import { describe, expect, it } from "vitest";
import {
  type BreakerOptions,
  breakerAdmit,
  breakerAllows,
  breakerRecord,
  type CallOutcome,
  CLOSED,
  type RegionBreaker,
} from "./breaker-policy.ts";

const options: BreakerOptions = { failures: 3, cooldownMs: 1000, maxCooldownMs: 2500 };
const record = (b: RegionBreaker, outcomes: CallOutcome[], now = 0) =>
  outcomes.reduce((state, outcome) => breakerRecord(state, outcome, now, options), b);

describe("RegionBreaker", () => {
  it("opens after N consecutive failures, not after N failures with a success between", () => {
    expect(record(CLOSED, ["failure", "failure"])).toEqual({ state: "closed", failures: 2, ejections: 0 });
    expect(record(CLOSED, ["failure", "failure", "success", "failure", "failure"]).state).toBe("closed");
    expect(record(CLOSED, ["failure", "failure", "failure"], 100)).toEqual({
      state: "open",
      until: 1100,
      ejections: 1,
    });
  });

  it("ignores neutral calls (cancelled, never sent)", () => {
    expect(record(CLOSED, ["failure", "neutral", "failure", "neutral"])).toEqual({
      state: "closed",
      failures: 2,
      ejections: 0,
    });
  });

  it("refuses calls while open and admits one trial call after the cool-down", () => {
    const opened = record(CLOSED, ["failure", "failure", "failure"], 0);
    expect(breakerAdmit(opened, 999)).toEqual({ admit: false, breaker: opened });
    expect(breakerAllows(opened, 999)).toBe(false);
    const trial = breakerAdmit(opened, 1000);
    expect(trial).toEqual({ admit: true, breaker: { state: "half-open", trialInFlight: true, ejections: 1 } });
    // Only one trial call at a time.
    expect(breakerAdmit(trial.breaker, 1001).admit).toBe(false);
    expect(breakerAllows(trial.breaker, 1001)).toBe(false);
  });

  it("closes when the trial call succeeds", () => {
    const trialing: RegionBreaker = { state: "half-open", trialInFlight: true, ejections: 2 };
    expect(breakerRecord(trialing, "success", 5000, options)).toEqual(CLOSED);
  });

  it("reopens for longer when the trial call fails, up to the maximum cool-down", () => {
    const first = record(CLOSED, ["failure", "failure", "failure"], 0);
    const trial1 = breakerAdmit(first, 1000).breaker;
    const second = breakerRecord(trial1, "failure", 1000, options);
    expect(second).toEqual({ state: "open", until: 3000, ejections: 2 });
    const trial2 = breakerAdmit(second, 3000).breaker;
    expect(breakerRecord(trial2, "failure", 3000, options)).toEqual({ state: "open", until: 5500, ejections: 3 });
  });

  it("frees the trial slot when the trial call ends neutral", () => {
    const trialing: RegionBreaker = { state: "half-open", trialInFlight: true, ejections: 1 };
    const freed = breakerRecord(trialing, "neutral", 10, options);
    expect(freed).toEqual({ state: "half-open", trialInFlight: false, ejections: 1 });
    expect(breakerAdmit(freed, 10).admit).toBe(true);
  });

  it("keeps an ejection when a call admitted earlier ends late", () => {
    const opened: RegionBreaker = { state: "open", until: 500, ejections: 1 };
    expect(breakerRecord(opened, "success", 10, options)).toBe(opened);
    expect(breakerRecord(opened, "failure", 10, options)).toBe(opened);
  });
});
