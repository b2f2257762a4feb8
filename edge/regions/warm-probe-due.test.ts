import { describe, expect, it } from "vitest";
import { warmProbeDue } from "./warm-probe-due.ts";

describe("warmProbeDue", () => {
  it("is due for a region never probed", () => {
    expect(warmProbeDue({ inFlight: false }, 1_000, 3_000, 10_000)).toBe(true);
  });

  it("waits out the interval since the last probe was sent", () => {
    expect(warmProbeDue({ sentAt: 1_000, inFlight: false }, 3_999, 3_000, 10_000)).toBe(false);
    expect(warmProbeDue({ sentAt: 1_000, inFlight: false }, 4_000, 3_000, 10_000)).toBe(true);
  });

  it("sends no second probe while one is out, until that one counts as lost", () => {
    expect(warmProbeDue({ sentAt: 1_000, inFlight: true }, 10_999, 3_000, 10_000)).toBe(false);
    expect(warmProbeDue({ sentAt: 1_000, inFlight: true }, 11_000, 3_000, 10_000)).toBe(true);
  });
});
