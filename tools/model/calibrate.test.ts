import { describe, expect, it } from "vitest";
import { accuracy, calibrateThreshold, cascadeFigures, labelAgreement, type ProbabilityMatrix } from "./calibrate.ts";

/** Two-class probabilities from each row's probability of class 1. */
const matrix = (p1: number[]): ProbabilityMatrix => ({
  probs: p1.flatMap((p) => [1 - p, p]),
  rows: p1.length,
  classes: 2,
});

describe("calibrateThreshold", () => {
  // 300 rows: the full model says class 1 everywhere; the edge is sure (0.99) and right on 250 rows, and on
  // 50 rows less sure, with the wrong label on the least sure 10.
  const full = matrix(Array(300).fill(0.9));
  const edgeP1 = [...Array(250).fill(0.99), ...Array(40).fill(0.7), ...Array(10).fill(0.4)];
  const edge = matrix(edgeP1);

  it("picks the smallest threshold whose answers reach the target, with one disagreement of margin", () => {
    // At 0.7: 290 rows answered, 0 disagreements: 1 - 1/290 = 0.99655 >= 0.995.
    expect(calibrateThreshold(edge, full, 0.995)).toEqual({ ok: true, threshold: 0.7 });
    // At 0.6 (class 0 at 0.6 for the last 10): all 300 answered, 10 disagree: 1 - 11/300 = 0.9633.
    expect(calibrateThreshold(edge, full, 0.96)).toEqual({ ok: true, threshold: 0.6 });
  });

  it("floors the threshold to 6 decimals so it still admits the rows it was calibrated on", () => {
    const result = calibrateThreshold(matrix(Array(300).fill(0.12345678)), matrix(Array(300).fill(0.1)), 0.99);
    expect(result).toEqual({ ok: true, threshold: 0.876543 });
  });

  it("is not ok when no threshold reaches the target, and says how close it came", () => {
    // 100 rows answered without a disagreement show at most 1 - 1/100.
    const small = calibrateThreshold(matrix(Array(100).fill(0.99)), matrix(Array(100).fill(0.9)), 0.995);
    expect(small).toEqual({ ok: false, bestAgreement: 0.99, atThreshold: 0.99 });
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
