import { describe, expect, it } from "vitest";
import { wilson, Z_95 } from "./wilson.ts";

describe("wilson", () => {
  it("matches published values (Newcombe 1998, Table I: 81/263 and 15/148 at 95%)", () => {
    const a = wilson(81, 263);
    expect(a.lower).toBeCloseTo(0.2553, 4);
    expect(a.upper).toBeCloseTo(0.3662, 4);
    const b = wilson(15, 148);
    expect(b.lower).toBeCloseTo(0.0624, 4);
    expect(b.upper).toBeCloseTo(0.1605, 4);
  });

  it("keeps all-agree and none-agree inside [0, 1], with a real spread", () => {
    const all = wilson(346, 346);
    expect(all.share).toBe(1);
    expect(all.upper).toBe(1);
    expect(all.lower).toBeCloseTo(346 / (346 + Z_95 ** 2), 6); // closed form at p = 1
    expect(all.lower).toBeLessThan(0.99);
    const none = wilson(0, 20);
    expect(none.lower).toBe(0);
    expect(none.upper).toBeCloseTo(Z_95 ** 2 / (20 + Z_95 ** 2), 6);
  });

  it("narrows as the sample grows and always holds the observed share", () => {
    let width = 1;
    for (const n of [10, 100, 1000, 10000]) {
      const w = wilson(0.9 * n, n);
      expect(w.lower).toBeLessThanOrEqual(0.9);
      expect(w.upper).toBeGreaterThanOrEqual(0.9);
      expect(w.upper - w.lower).toBeLessThan(width);
      width = w.upper - w.lower;
    }
  });

  it("is the whole range without trials, and refuses impossible counts", () => {
    expect(wilson(0, 0)).toMatchObject({ lower: 0, upper: 1 });
    expect(() => wilson(5, 4)).toThrow(RangeError);
  });
});
