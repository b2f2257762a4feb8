import { describe, expect, it } from "vitest";
import { accuracy, calibrateThreshold, cascadeFigures, labelAgreement, type ProbabilityMatrix } from "./calibrate.ts";

/** Two-class probabilities from each row's probability of class 1. */
const matrix = (p1: number[]): ProbabilityMatrix => ({
  probs: p1.flatMap((p) => [1 - p, p]),
  rows: p1.length,
  classes: 2,
});

describe("calibrateThreshold", () => {
  // 700 rows: the full model says class 1 everywhere; the edge is sure (0.99) and right on 600 rows, less sure
  // (0.7) and right on 90 more, and has the wrong label on the least sure 10 (class 0 at 0.6).
  const full = matrix(Array(700).fill(0.9));
  const edgeP1 = [...Array(600).fill(0.99), ...Array(90).fill(0.7), ...Array(10).fill(0.4)];
  const edge = matrix(edgeP1);

  it("picks the smallest threshold whose answers prove the target at 95% (Clopper–Pearson), not as a point estimate", () => {
    // At 0.7: 690 rows, none disagree: 0.05^(1/690) = 0.99567 proves 0.995.
    expect(calibrateThreshold(edge, full, 0.995)).toEqual({
      ok: true,
      target: 0.995,
      confidence: 0.95,
      rows: 700,
      chosen: { threshold: 0.7, answered: 690, disagreements: 0, provenAgreement: 0.9956 },
    });
    // At 0.6 all 700 are answered and 10 disagree: 98.57% seen, 97.58% proven (beta.ppf(0.05, 690, 11)).
    const lower = calibrateThreshold(edge, full, 0.975);
    expect(lower.ok && lower.chosen).toEqual({
      threshold: 0.6,
      answered: 700,
      disagreements: 10,
      provenAgreement: 0.9758,
    });
    // 98% is seen at 0.6 but not proven there: the threshold stays at 0.7.
    const seen = calibrateThreshold(edge, full, 0.98);
    expect(seen.ok && seen.chosen.threshold).toBe(0.7);
  });

  it("a higher confidence asks for more: 99% does not prove 0.995 on 690 rows", () => {
    const strict = calibrateThreshold(edge, full, 0.995, 0.99);
    expect(strict.ok).toBe(false);
    expect(strict.confidence).toBe(0.99);
  });

  it("floors the threshold to 6 decimals so it still admits the rows it was calibrated on", () => {
    const result = calibrateThreshold(matrix(Array(300).fill(0.12345678)), matrix(Array(300).fill(0.1)), 0.99);
    expect(result.ok && result.chosen.threshold).toBe(0.876543);
  });

  it("with too few rows: not ok, the best it proves, and how many rows would prove the target", () => {
    // 100 rows that all agree prove 0.05^(1/100) = 0.97049 (0.9704, floored); 0.995 takes 598 such rows.
    const small = calibrateThreshold(matrix(Array(100).fill(0.99)), matrix(Array(100).fill(0.9)), 0.995);
    expect(small).toEqual({
      ok: false,
      target: 0.995,
      confidence: 0.95,
      rows: 100,
      best: { threshold: 0.99, answered: 100, disagreements: 0, provenAgreement: 0.9704 },
      rowsNeeded: 598,
    });
    // Where the edge answers half the rows, twice as many calibration rows.
    const half = calibrateThreshold(
      matrix([...Array(50).fill(0.99), ...Array(50).fill(0.45)]),
      matrix(Array(100).fill(0.9)),
      0.99,
    );
    expect(half.ok === false && half.rowsNeeded).toBe(598);
  });

  it("names no row count when the edge disagrees as often as the target allows wherever it answers", () => {
    // Every answered row: 1 of 10 disagrees; no amount of such rows proves 0.95.
    const edgeP = Array.from({ length: 100 }, (_, i) => (i % 10 === 0 ? 0.1 : 0.9));
    const result = calibrateThreshold(matrix(edgeP), matrix(Array(100).fill(0.9)), 0.95);
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.rowsNeeded).toBeUndefined();
  });
});

describe("cascadeFigures", () => {
  it("counts edge share, agreement and cascade accuracy at a threshold", () => {
    const edge = matrix([0.95, 0.95, 0.2, 0.6]);
    const full = matrix([0.9, 0.1, 0.1, 0.1]);
    // The edge answers rows 0, 1 (class 1 at 0.95) and 2 (class 0 at 0.8), and disagrees with the full model on
    // row 1; row 3 (0.6) goes to the full model.
    const figures = cascadeFigures(0.8, edge, full, [1, 1, 0, 0]);
    expect(figures).toEqual({ edgeShare: 0.75, agreement: 0.6667, cascadeAccuracy: 1 });
    expect(cascadeFigures(1.0, edge, full, [1, 1, 0, 0])).toEqual({
      edgeShare: 0,
      agreement: 1,
      cascadeAccuracy: 0.75,
    });
  });
});

describe("accuracy and labelAgreement", () => {
  it("compare top classes", () => {
    expect(accuracy(matrix([0.9, 0.2, 0.7]), [1, 0, 0])).toBe(0.6667);
    expect(labelAgreement(matrix([0.9, 0.2, 0.7]), matrix([0.6, 0.4, 0.1]))).toBe(0.6667);
  });
});
