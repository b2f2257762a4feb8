import { describe, expect, it } from "vitest";
import { calibrateThreshold, type ProbabilityMatrix } from "../calibrate.ts";
import { brokenPromise, unprovenMessage } from "./promise.ts";

const matrix = (p1: number[]): ProbabilityMatrix => ({
  probs: p1.flatMap((p) => [1 - p, p]),
  rows: p1.length,
  classes: 2,
});

describe("the import's promise", () => {
  it("too few rows: says what they prove, which --agreement would pass, and how many rows the target needs", () => {
    // 44 calibration rows (issue 33's wine), none of them disagreeing: 0.05^(1/44) = 0.93418 is all they prove.
    const calibration = calibrateThreshold(
      matrix([...Array(40).fill(0.95), ...Array(4).fill(0.55)]),
      matrix(Array(44).fill(0.9)),
      0.97,
    );
    expect(calibration.ok).toBe(false);
    if (calibration.ok) return;
    expect(unprovenMessage(calibration, "--edge-trees 8", 0.5)).toBe(
      "--edge-trees 8 cannot be shown to reach agreement 0.97 with the full model at 95% confidence on the 44 " +
        "calibration rows: the most they prove is agreement 0.9341 (threshold 0.55: 44 rows answered, 0 disagreeing), " +
        "so --agreement 0.9341 would pass; proving 0.97 would take about 99 calibration rows like these (about 198 " +
        "rows of --data at --heldout-fraction 0.5); use more data, a better edge variant, or a lower --agreement",
    );
  });

  it("a held-out agreement below the target is refused with the numbers; at or above it, kept", () => {
    const calibration = calibrateThreshold(matrix(Array(400).fill(0.95)), matrix(Array(400).fill(0.9)), 0.97);
    expect(calibration.ok).toBe(true);
    if (!calibration.ok) return;
    const heldout = { edgeShare: 0.875, agreement: 0.9524, cascadeAccuracy: 0.9333 };
    expect(brokenPromise(calibration, heldout, 48, "m-edge")).toBe(
      "m-edge agrees with the full model on 95.24% of the 42 held-out rows it answers at threshold 0.95, below " +
        "--agreement 0.97, although its 400 calibration rows there (0 disagreeing) proved 0.9925 at 95% confidence: " +
        "the promise would not hold. Use more data, a better edge variant, or a lower --agreement",
    );
    expect(brokenPromise(calibration, { ...heldout, agreement: 0.97 }, 48, "m-edge")).toBeUndefined();
  });
});
