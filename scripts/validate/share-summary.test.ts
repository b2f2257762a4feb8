import { describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { shareSummary } from "./share-summary.ts";

const row = (label: number, full: number): HeldoutRow => ({
  input: [],
  label,
  expected: { m: [0, 1, 2].map((c) => (c === full ? 0.8 : 0.1)) },
});

describe("shareSummary", () => {
  it("counts tiers and degraded reasons, and scores agreement with the full model and the labels", () => {
    const summary = shareSummary(
      [
        { row: row(0, 0), servedBy: "edge", answered: 0 },
        { row: row(1, 2), servedBy: "regional:eu", answered: 2 },
        { row: row(2, 2), servedBy: "degraded", degraded: "too-far", answered: 1 },
        { row: row(1, 1), servedBy: "cache", answered: 1 },
        { row: row(0, 0), servedBy: null, answered: null },
      ],
      "m",
    );
    expect(summary).toEqual({
      rows: 5,
      tiers: { cache: 1, edge: 1, regional: 1, degraded: 1, failed: 1 },
      degradedReasons: { "too-far": 1 },
      regionalShare: 0.2,
      agreement: 0.6,
      accuracy: 0.4,
    });
  });
});
