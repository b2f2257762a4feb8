import { describe, expect, it } from "vitest";
import { evidenceFromAnswer, evidenceQuery } from "./prometheus-evidence.ts";

describe("the step's evidence from Prometheus", () => {
  const state = { model: "digits", id: 7, step: 2 };

  it("sums every pod's series of the rollout's step by count", () => {
    expect(evidenceQuery(state)).toBe(
      'sum by (count) (edgecascade_rollout_step_evidence{model="digits",rollout="7",step="2"})',
    );
  });

  it("reads an instant vector back as evidence, and says why a failed query is no evidence", () => {
    const answer = {
      status: "success",
      data: {
        resultType: "vector",
        result: [
          { metric: { count: "candidate_runs" }, value: [1, "412"] },
          { metric: { count: "disagreeing_rows" }, value: [1, "3"] },
        ],
      },
    };
    expect(evidenceFromAnswer(state, answer)).toMatchObject({
      id: 7,
      step: 2,
      candidate: { runs: 412 },
      comparisons: { disagreements: 3 },
    });
    expect(
      evidenceFromAnswer(state, { status: "success", data: { resultType: "vector", result: [] } }),
    ).toBeUndefined();
    expect(() => evidenceFromAnswer(state, { status: "error", error: "parse error" })).toThrow(
      /query failed: parse error/,
    );
  });
});
