import { describe, expect, it } from "vitest";
import { regionalServerTiming, simulatedDelayTiming } from "./server-timing.ts";

describe("regionalServerTiming", () => {
  it("writes the pool's entries, after the simulated distance's", () => {
    const t = { queueMs: 0.12, computeMs: 0.0451, batchRows: 40, totalMs: 0.3104 };
    expect(regionalServerTiming("", t)).toBe(
      'queue;dur=0.120, compute;dur=0.045;desc="batch of 40", total;dur=0.310;desc="regional"',
    );
    expect(simulatedDelayTiming(0)).toBe("");
    expect(regionalServerTiming(simulatedDelayTiming(20), t)).toBe(
      'delay;dur=20.000;desc="simulated distance", queue;dur=0.120, compute;dur=0.045;desc="batch of 40", total;dur=0.310;desc="regional"',
    );
  });
});
