import { describe, expect, it } from "vitest";
import { cascadeDecision } from "./decision.ts";

const T = 0.678228;

describe("cascadeDecision", () => {
  it.each([
    [[0.99], "auto", "edge"],
    [[T], "auto", "edge"],
    [[T - 1e-6], "auto", "regional"],
    [[0.99, 0.95, 0.7], "auto", "edge"],
    [[0.99, 0.5, 0.99], "auto", "regional"],
    [[], "auto", "regional"],
    [[0.2], "edge", "edge"],
    [[0.99], "regional", "regional"],
    [[], "regional", "regional"],
  ] as const)("%j with %s -> %s", (confidences, mode, tier) => {
    expect(cascadeDecision(confidences, T, mode)).toBe(tier);
  });

  it("treats NaN confidence as unsure", () => {
    expect(cascadeDecision([Number.NaN], T, "auto")).toBe("regional");
  });
});
