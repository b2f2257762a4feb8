import { describe, expect, it } from "vitest";
import { disagreements, nextShadowMove, offerDecision } from "./shadow-policy.ts";

describe("offerDecision", () => {
  it.each([
    [0.49, 0.5, 0, 4, "queued"],
    [0.5, 0.5, 0, 4, "unsampled"],
    [0, 0, 0, 4, "unsampled"],
    [0.99, 1, 3, 4, "queued"],
    [0.1, 1, 4, 4, "dropped"],
    [0.1, 1, 0, 0, "dropped"],
  ] as const)("draw %f, sample %f, %i waiting of %i: %s", (draw, sample, waiting, maxQueue, decision) => {
    expect(offerDecision(draw, sample, waiting, maxQueue)).toBe(decision);
  });
});

describe("nextShadowMove", () => {
  it.each([
    [false, 0, 3, "clear"],
    [false, 2, 0, "clear"],
    [true, 1, 3, "wait"],
    [true, 0, 3, "run"],
    [true, 0, 0, "idle"],
  ] as const)("pair %s, %i live, %i waiting: %s", (hasPair, live, waiting, move) => {
    expect(nextShadowMove(hasPair, live, waiting)).toBe(move);
  });
});

describe("disagreements", () => {
  it("counts the rows whose top labels differ", () => {
    // Three rows of three classes: row 0 agrees (class 2), row 1 differs (0 vs 1), row 2 agrees (1).
    const stable = Float32Array.of(0.1, 0.2, 0.7, 0.6, 0.3, 0.1, 0.2, 0.5, 0.3);
    const candidate = Float32Array.of(0.2, 0.1, 0.7, 0.3, 0.6, 0.1, 0.1, 0.8, 0.1);
    expect(disagreements(stable, candidate, 3)).toBe(1);
    expect(disagreements(stable, stable, 3)).toBe(0);
  });

  it("takes the first class on a tie, in both versions alike", () => {
    expect(disagreements(Float32Array.of(0.5, 0.5), Float32Array.of(0.5, 0.5), 1)).toBe(0);
    expect(disagreements(Float32Array.of(0.5, 0.5), Float32Array.of(0.4, 0.6), 1)).toBe(1);
  });
});
