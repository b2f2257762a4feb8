import { describe, expect, it } from "vitest";
import { checkDelaySettings, DelayLine, releaseTime } from "./delay-line.ts";

const fixed = (delayMs: number, jitterMs = 0) => ({ delayMs, jitterMs });

describe("releaseTime", () => {
  it("is arrival plus the delay when nothing is ahead", () => {
    expect(releaseTime(100, Number.NEGATIVE_INFINITY, fixed(40), 0.5)).toBe(140);
  });

  it("spreads jitter uniformly over ±jitterMs", () => {
    expect(releaseTime(100, 0, fixed(40, 10), 0)).toBe(130);
    expect(releaseTime(100, 0, fixed(40, 10), 0.5)).toBe(140);
    expect(releaseTime(100, 0, fixed(40, 10), 0.999)).toBeCloseTo(149.98);
  });

  it("never goes below arrival, whatever the jitter", () => {
    expect(releaseTime(100, 0, fixed(2, 10), 0)).toBe(100);
  });

  it("never releases before the chunk ahead: jitter and a lowered delay cannot reorder bytes", () => {
    expect(releaseTime(101, 150, fixed(40, 10), 0)).toBe(150);
    // The delay dropped from 120 to 2 ms while a chunk released at 220 is still queued.
    expect(releaseTime(110, 220, fixed(2), 0.5)).toBe(220);
  });
});

describe("checkDelaySettings", () => {
  it.each([
    [{ delayMs: -1, jitterMs: 0 }, "delayMs must be a number >= 0, got -1"],
    [{ delayMs: 1, jitterMs: Number.NaN }, "jitterMs must be a number >= 0, got NaN"],
  ])("refuses %o", (settings, message) => {
    expect(() => checkDelaySettings(settings)).toThrow(message);
  });
});

describe("DelayLine", () => {
  it("hands out items in arrival order once each is due", () => {
    const line = new DelayLine<string>();
    line.push("a", 10, 0, fixed(40), 0.5);
    line.push("b", 20, 5, fixed(40), 0.5);
    expect(line.bytes).toBe(30);
    expect(line.nextAt()).toBe(40);
    expect(line.take(39)).toEqual([]);
    expect(line.take(40)).toEqual(["a"]);
    expect(line.bytes).toBe(20);
    expect(line.nextAt()).toBe(45);
    expect(line.take(100)).toEqual(["b"]);
    expect(line.nextAt()).toBeUndefined();
    expect(line.bytes).toBe(0);
  });

  it("keeps order when the delay is lowered mid-stream", () => {
    const line = new DelayLine<string>();
    line.push("slow", 1, 0, fixed(120), 0.5);
    line.push("fast", 1, 1, fixed(2), 0.5);
    expect(line.take(3)).toEqual([]);
    expect(line.take(120)).toEqual(["slow", "fast"]);
  });

  it("clear drops what is in flight", () => {
    const line = new DelayLine<string>();
    line.push("lost", 5, 0, fixed(10), 0.5);
    line.clear();
    expect(line.take(1000)).toEqual([]);
    expect(line.bytes).toBe(0);
  });
});
