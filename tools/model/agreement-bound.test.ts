import { describe, expect, it } from "vitest";
import { agreementLowerBound, rowsToProve } from "./agreement-bound.ts";

describe("agreementLowerBound (one-sided Clopper–Pearson)", () => {
  it("with every row agreeing is (1 - confidence)^(1/n)", () => {
    expect(agreementLowerBound(59, 59)).toBeCloseTo(0.05 ** (1 / 59), 12);
    expect(agreementLowerBound(299, 299)).toBeGreaterThanOrEqual(0.99);
    expect(agreementLowerBound(298, 298)).toBeLessThan(0.99);
  });

  it("is the beta quantile scipy gives: beta.ppf(0.05, x, n - x + 1)", () => {
    expect(agreementLowerBound(95, 100)).toBeCloseTo(0.8977466223567255, 9);
    expect(agreementLowerBound(990, 1000)).toBeCloseTo(0.9830968248794375, 9);
    expect(agreementLowerBound(169, 170)).toBeCloseTo(0.9724003120728357, 9);
    expect(agreementLowerBound(1, 2)).toBeCloseTo(0.02532056551910361, 9);
  });

  it("is 0 for no agreeing row or no row, and refuses counts that cannot be", () => {
    expect(agreementLowerBound(0, 10)).toBe(0);
    expect(agreementLowerBound(0, 0)).toBe(0);
    expect(() => agreementLowerBound(11, 10)).toThrow(RangeError);
  });

  it("a higher confidence proves less", () => {
    expect(agreementLowerBound(300, 300, 0.99)).toBeLessThan(agreementLowerBound(300, 300, 0.95));
  });
});

describe("rowsToProve", () => {
  it("with no disagreement: 59 rows for 0.95, 299 for 0.99, 598 for 0.995", () => {
    expect(rowsToProve(0.95, 0)).toBe(59);
    expect(rowsToProve(0.99, 0)).toBe(299);
    expect(rowsToProve(0.995, 0)).toBe(598);
  });

  it("more where the edge disagrees now and then, and none where it disagrees as often as the target allows", () => {
    const n = rowsToProve(0.97, 0.01)!;
    expect(n).toBeGreaterThan(rowsToProve(0.97, 0)!);
    expect(agreementLowerBound(n - Math.ceil(0.01 * n), n)).toBeGreaterThanOrEqual(0.97);
    expect(rowsToProve(0.97, 0.03)).toBeUndefined();
    expect(rowsToProve(0.97, 0.05)).toBeUndefined();
  });
});
