import { describe, expect, it } from "vitest";
import { nearestRank, quantile } from "./quantile.ts";

const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

describe("nearestRank", () => {
  it("is the ceil(q·n)-th smallest value", () => {
    expect(nearestRank(hundred, 0.5)).toBe(50);
    expect(nearestRank(hundred, 0.95)).toBe(95);
    expect(nearestRank(hundred, 0.99)).toBe(99);
    expect(nearestRank(hundred, 0.07)).toBe(7);
    expect(nearestRank(hundred, 0.995)).toBe(100);
    expect(nearestRank(hundred, 1)).toBe(100);
    expect(nearestRank(hundred, 0)).toBe(1);
  });

  it("on few values, rounds the rank up: the p99 of 10 values is the largest, the median of 4 the second", () => {
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(nearestRank(ten, 0.99)).toBe(10);
    expect(nearestRank(ten, 0.9)).toBe(9);
    expect(nearestRank(ten, 0.91)).toBe(10);
    expect(nearestRank([1, 2, 3, 4], 0.5)).toBe(2);
    expect(nearestRank([1, 2, 3], 0.5)).toBe(2);
    expect(nearestRank([7], 0.99)).toBe(7);
    expect(nearestRank(Float64Array.of(1, 2, 3), 0.9)).toBe(3);
  });

  it("has no quantile of nothing", () => {
    expect(() => nearestRank([], 0.5)).toThrow(RangeError);
  });
});

describe("quantile", () => {
  it("sorts a copy numerically first", () => {
    const values = [10, 9, 1, 100, 2];
    expect(quantile(values, 0.5)).toBe(9);
    expect(quantile(values, 0.8)).toBe(10);
    expect(values).toEqual([10, 9, 1, 100, 2]);
  });
});
