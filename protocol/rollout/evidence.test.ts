import { describe, expect, it } from "vitest";
import { addEvidence, emptyEvidence } from "./evidence.ts";

describe("step evidence", () => {
  it("adds counters exactly and keeps the highest display quantile", () => {
    const a = emptyEvidence(3, 1);
    a.candidate = { runs: 10, errors: 1 };
    a.comparisons = { rows: 12, disagreements: 2 };
    a.shadowMs = { stable: 0.2, candidate: null };
    const b = emptyEvidence(3, 1);
    b.candidate = { runs: 5, errors: 0 };
    b.latency = { pairs: 40, tail: 4, slow: 1 };
    b.shadowMs = { stable: 0.3, candidate: 0.1 };
    const sum = addEvidence(a, b);
    expect(sum).toMatchObject({
      id: 3,
      step: 1,
      candidate: { runs: 15, errors: 1 },
      comparisons: { rows: 12, disagreements: 2 },
      latency: { pairs: 40, tail: 4, slow: 1 },
      shadowMs: { stable: 0.3, candidate: 0.1 },
    });
  });

  it("refuses to add another step's or rollout's counts", () => {
    expect(() => addEvidence(emptyEvidence(3, 1), emptyEvidence(3, 2))).toThrow("do not add up");
    expect(() => addEvidence(emptyEvidence(3, 1), emptyEvidence(4, 1))).toThrow("do not add up");
  });
});
