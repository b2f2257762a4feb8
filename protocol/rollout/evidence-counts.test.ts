import { describe, expect, it } from "vitest";
import { emptyEvidence } from "./evidence.ts";
import { EVIDENCE_COUNTS, evidenceCounts, evidenceFromCounts } from "./evidence-counts.ts";

describe("evidence as named counts", () => {
  it("reads back every count it wrote, each to its own field", () => {
    const counts = Object.fromEntries(EVIDENCE_COUNTS.map((k, i) => [k, i + 1]));
    const evidence = evidenceFromCounts(7, 2, { ...counts, unknown: 99 });
    expect(evidenceCounts(evidence)).toEqual(counts);
    expect(evidence).toMatchObject({
      id: 7,
      step: 2,
      candidate: { runs: 1, errors: 2 },
      live: { stable: 13, candidate: 14 },
    });
    expect(evidenceFromCounts(7, 2, {})).toEqual(emptyEvidence(7, 2));
  });
});
