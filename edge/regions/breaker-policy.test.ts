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

  it("refuses calls while open and admits one probe after the cool-down", () => {
    const opened = record(CLOSED, ["failure", "failure", "failure"], 0);
    expect(breakerAdmit(opened, 999)).toEqual({ admit: false, breaker: opened });
    expect(breakerAllows(opened, 999)).toBe(false);
    const probe = breakerAdmit(opened, 1000);
    expect(probe).toEqual({ admit: true, breaker: { state: "half-open", probing: true, ejections: 1 } });
    // Only one probe at a time.
    expect(breakerAdmit(probe.breaker, 1001).admit).toBe(false);
    expect(breakerAllows(probe.breaker, 1001)).toBe(false);
  });

  it("closes when the probe succeeds", () => {
    const probing: RegionBreaker = { state: "half-open", probing: true, ejections: 2 };
    expect(breakerRecord(probing, "success", 5000, options)).toEqual(CLOSED);
  });

  it("reopens for longer when the probe fails, up to the maximum cool-down", () => {
    const first = record(CLOSED, ["failure", "failure", "failure"], 0);
    const probe1 = breakerAdmit(first, 1000).breaker;
    const second = breakerRecord(probe1, "failure", 1000, options);
    expect(second).toEqual({ state: "open", until: 3000, ejections: 2 });
    const probe2 = breakerAdmit(second, 3000).breaker;
    expect(breakerRecord(probe2, "failure", 3000, options)).toEqual({ state: "open", until: 5500, ejections: 3 });
  });

  it("frees the probe slot when the probe ends neutral", () => {
    const probing: RegionBreaker = { state: "half-open", probing: true, ejections: 1 };
    const freed = breakerRecord(probing, "neutral", 10, options);
    expect(freed).toEqual({ state: "half-open", probing: false, ejections: 1 });
    expect(breakerAdmit(freed, 10).admit).toBe(true);
  });

  it("keeps an ejection when a call admitted earlier ends late", () => {
    const opened: RegionBreaker = { state: "open", until: 500, ejections: 1 };
    expect(breakerRecord(opened, "success", 10, options)).toBe(opened);
    expect(breakerRecord(opened, "failure", 10, options)).toBe(opened);
  });
});
