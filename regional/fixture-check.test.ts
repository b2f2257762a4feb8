import { describe, expect, it } from "vitest";
import { checkFixtureOutputs } from "./fixture-check.ts";

/** Two classes, rows given as their first probability. */
const rows = (...first: number[]) => Float32Array.from(first.flatMap((p) => [p, 1 - p]));

describe("checkFixtureOutputs", () => {
  it("passes finite probability rows at or above the accuracy floor", () => {
    expect(checkFixtureOutputs(rows(0.9, 0.2, 0.6), [0, 1, 1], 2, 0.6)).toEqual({ ok: true, accuracy: 2 / 3 });
  });

  it("fails below the accuracy floor, saying both numbers", () => {
    expect(checkFixtureOutputs(rows(0.9, 0.2, 0.6), [0, 1, 1], 2, 0.7)).toEqual({
      ok: false,
      reason: "fixture accuracy 0.6667 is below the required 0.7000",
    });
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a negative value", -0.5],
  ])("fails on %s", (_, bad) => {
    const verdict = checkFixtureOutputs(Float32Array.from([0.5, 0.5, bad, 0.5]), [0, 0], 2, 0);
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.reason).toMatch(/^fixture row 1: output 0 is .*, not a probability$/);
  });

  it("fails when a row does not sum to 1 (e.g. logits instead of softmax)", () => {
    expect(checkFixtureOutputs(Float32Array.from([0.2, 0.3]), [1], 2, 0)).toEqual({
      ok: false,
      reason: "fixture row 0: probabilities sum to 0.500000, not 1",
    });
  });

  it("fails when the output has the wrong size", () => {
    expect(checkFixtureOutputs(new Float32Array(5), [0, 1], 3, 0)).toEqual({
      ok: false,
      reason: "expected 2x3 outputs on the fixture, got 5 values",
    });
  });
});
