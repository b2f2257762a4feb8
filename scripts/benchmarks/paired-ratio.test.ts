import { describe, expect, it } from "vitest";
import { median, pairedRatio } from "./paired-ratio.ts";

describe("median", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe("pairedRatio", () => {
  it("divides round by round, then summarises the ratios", () => {
    // Round ratios 0.5, 1, 0.8: the median of the ratios, not the ratio of the medians (600 / 500 = 1.2).
    expect(pairedRatio([500, 600, 800], [1000, 600, 1000])).toEqual({ median: 0.8, min: 0.5, max: 1 });
  });

  it("skips rounds where either side was not measured", () => {
    expect(pairedRatio([300, null, 200], [100, 100, null])).toEqual({ median: 3, min: 3, max: 3 });
    expect(pairedRatio([null], [100])).toBeUndefined();
    expect(pairedRatio([100], [0])).toBeUndefined();
  });
});
