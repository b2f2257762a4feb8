import { describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { cascadeOutcome } from "./tradeoff.ts";

const row = (label: number, edge: number[], full: number[]): HeldoutRow => ({
  input: [],
  label,
  expected: { full, edge },
});
// The edge is sure and right, sure and wrong, unsure and wrong (the full model right), unsure and right.
const rows = [
  row(0, [0.95, 0.05], [0.9, 0.1]),
  row(1, [0.9, 0.1], [0.2, 0.8]),
  row(1, [0.6, 0.4], [0.3, 0.7]),
  row(0, [0.55, 0.45], [0.4, 0.6]),
];

describe("cascadeOutcome", () => {
  it.each([
    [0, 1, 0.5],
    [0.7, 0.5, 0.5],
    [0.92, 0.25, 0.75],
    [1, 0, 0.75],
  ])("threshold %s: edge share %s, accuracy %s", (threshold, edgeShare, accuracy) => {
    expect(cascadeOutcome(rows, threshold, "full", "edge")).toEqual({ threshold, edgeShare, accuracy });
  });

  it("counts the full model's answers where the edge is unsure", () => {
    // Threshold 0.58: rows 1-3 at the edge (rows 2 and 3 wrong), row 4 to the full model (wrong).
    expect(cascadeOutcome(rows, 0.58, "full", "edge").accuracy).toBe(0.25);
    // Threshold 0.93: only row 1 at the edge (right); the full model: row 2 right, row 3 right, row 4 wrong.
    expect(cascadeOutcome(rows, 0.93, "full", "edge").accuracy).toBe(0.75);
  });
});
