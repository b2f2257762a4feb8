import { describe, expect, it } from "vitest";
import { hedgeDelay } from "./hedge-policy.ts";

describe("hedgeDelay", () => {
  it("uses the default until there are enough samples", () => {
    expect(hedgeDelay([], { defaultMs: 5 })).toBe(5);
    expect(hedgeDelay(Array(19).fill(40), { defaultMs: 5 })).toBe(5);
    expect(hedgeDelay(Array(20).fill(40), { defaultMs: 5 })).toBe(40);
  });

  it("follows the observed p95", () => {
    // 19 fast calls in 20, one slow: p95 is the 19th value.
    const samples = [...Array(19).fill(2), 300];
    expect(hedgeDelay(samples, { defaultMs: 5 })).toBe(2);
    expect(hedgeDelay([...samples, 300, 300], { defaultMs: 5, quantile: 0.9 })).toBe(300);
    expect(hedgeDelay([3], { defaultMs: 5, minSamples: 1 })).toBe(3);
  });
});
