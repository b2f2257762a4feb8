import { describe, expect, it } from "vitest";
import { LOCAL_REGIONS } from "./local-regions.ts";
import { warmRequests } from "./warm-stack.ts";

const digits = {
  name: "digits",
  rows: [
    [1, 2],
    [3, 4],
    [5, 6],
  ],
  edge: true,
};
const trees = { name: "trees", rows: [[7]], edge: false };

describe("warmRequests", () => {
  it("sends every region each model's rows from its own place, and each edge variant its own", () => {
    const requests = warmRequests(LOCAL_REGIONS, [digits, trees], 2);
    // Per round: digits to us, eu, ap and its edge variant; trees to us, eu, ap (no edge variant).
    expect(requests).toHaveLength(2 * 7);
    expect(requests.slice(0, 7)).toEqual([
      { model: "digits", cascade: "regional", location: "39.04,-77.49", inputs: [1, 2] },
      { model: "digits", cascade: "regional", location: "50.11,8.68", inputs: [1, 2] },
      { model: "digits", cascade: "regional", location: "35.68,139.69", inputs: [1, 2] },
      { model: "digits", cascade: "edge", inputs: [1, 2] },
      { model: "trees", cascade: "regional", location: "39.04,-77.49", inputs: [7] },
      { model: "trees", cascade: "regional", location: "50.11,8.68", inputs: [7] },
      { model: "trees", cascade: "regional", location: "35.68,139.69", inputs: [7] },
    ]);
  });

  it("takes the next row each round, wrapping around a short sample", () => {
    const requests = warmRequests([LOCAL_REGIONS[0]], [digits], 4).filter((r) => r.cascade === "edge");
    expect(requests.map((r) => r.inputs)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
      [1, 2],
    ]);
  });

  it("skips a model without rows", () => {
    expect(warmRequests(LOCAL_REGIONS, [{ name: "empty", rows: [], edge: true }], 3)).toEqual([]);
  });
});
