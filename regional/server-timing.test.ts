import { describe, expect, it } from "vitest";
import { regionalServerTiming, threeDecimals } from "./server-timing.ts";

describe("server-timing", () => {
  it("writes a duration as toFixed(3) does", () => {
    for (const ms of [0, 0.001, 0.0104, 0.099, 0.1, 0.12345, 1, 9.9999, 12.3456, 999.9994, 1234.5678]) {
      expect(threeDecimals(ms)).toBe(ms.toFixed(3));
    }
    // Fresh durations, as the batcher measures them (µs over 1000).
    for (let i = 0; i < 2000; i++) {
      const ms = (Math.floor(Math.random() * 5e6) + 0.25) / 1000;
      expect(threeDecimals(ms)).toBe(ms.toFixed(3));
    }
  });

  it("writes the pool's entries, after the simulated distance's", () => {
    const t = { queueMs: 0.12, computeMs: 0.0451, batchRows: 40, totalMs: 0.3104 };
    expect(regionalServerTiming("", t)).toBe(
      'queue;dur=0.120, compute;dur=0.045;desc="batch of 40", total;dur=0.310;desc="regional"',
    );
    expect(regionalServerTiming('delay;dur=20;desc="simulated distance", ', t)).toMatch(
      /^delay;dur=20;.*, queue;dur=0.120,/,
    );
  });
});
