import { describe, expect, it } from "vitest";
import { ShadowDurations } from "./shadow-durations.ts";

describe("ShadowDurations", () => {
  it("answers nearest-rank quantiles of the last samples only", () => {
    const w = new ShadowDurations(100, 1);
    expect(w.quantile(0.95)).toBeNull();
    for (let i = 1; i <= 100; i++) w.add(i);
    expect(w.quantile(0.95)).toBe(95);
    expect(w.quantile(0.5)).toBe(50);
    for (let i = 0; i < 100; i++) w.add(1000 + i);
    expect(w.count).toBe(100);
    expect(w.quantile(0.95)).toBe(1094);
  });

  it("re-sorts only every `refreshEvery` samples", () => {
    const w = new ShadowDurations(10, 5);
    for (let i = 0; i < 10; i++) w.add(1);
    expect(w.quantile(0.9)).toBe(1);
    for (let i = 0; i < 4; i++) w.add(9);
    expect(w.quantile(0.9)).toBe(1);
    w.add(9);
    expect(w.quantile(0.9)).toBe(9);
    w.clear();
    expect(w.quantile(0.9)).toBeNull();
  });
});
