import { describe, expect, it } from "vitest";
import { seededRandom } from "./seeded-random.ts";

describe("seededRandom", () => {
  it("is uniform-looking in [0, 1) and the same for the same seed", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const draws = Array.from({ length: 10_000 }, () => a());
    expect(draws.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const mean = draws.reduce((s, d) => s + d, 0) / draws.length;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
    expect(seededRandom(43)()).not.toBe(seededRandom(42)());
  });
});
