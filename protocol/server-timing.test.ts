import { describe, expect, it } from "vitest";
import { timingEntry, timingMs } from "./server-timing.ts";

describe("timingMs", () => {
  it("writes a duration as toFixed(3) does", () => {
    for (const ms of [0, 0.001, 0.0104, 0.099, 0.1, 0.12345, 1, 9.9999, 12.3456, 999.9994, 1234.5678]) {
      expect(timingMs(ms)).toBe(ms.toFixed(3));
    }
    // Fresh durations, as the batcher measures them (µs over 1000).
    for (let i = 0; i < 2000; i++) {
      const ms = (Math.floor(Math.random() * 5e6) + 0.25) / 1000;
      expect(timingMs(ms)).toBe(ms.toFixed(3));
    }
  });
});

describe("timingEntry", () => {
  it.each([
    [["hedge"], "hedge"],
    [["cache", 0], "cache;dur=0.000"],
    [["regional", 7, "eu"], 'regional;dur=7.000;desc="eu"'],
    [["cache", undefined, "bypass"], 'cache;desc="bypass"'],
    [["compute", 0.0451, "batch of 40"], 'compute;dur=0.045;desc="batch of 40"'],
    [["regional", 3, 'we"ird\\'], 'regional;dur=3.000;desc="we\\"ird\\\\"'],
  ] as [[string, number?, string?], string][])("%j -> %s", (args, entry) => {
    expect(timingEntry(...args)).toBe(entry);
  });
});
