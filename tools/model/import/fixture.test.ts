import { describe, expect, it } from "vitest";
import { heldoutFixture } from "./fixture.ts";

describe("heldoutFixture", () => {
  it("holds the held-out rows with labels and each model's expected output", () => {
    const set = heldoutFixture({
      features: Float32Array.from([1, 2, 3, 4, 5, 6]),
      width: 2,
      labels: [0, 1, 1],
      classes: 2,
      rows: [0, 2],
      split: "s",
      models: [
        { name: "m", version: "1", probs: Float32Array.from([0.9, 0.1, 0.5, 0.5, 0.2, 0.8]) },
        { name: "m-edge", version: "3", probs: Float32Array.from([0.7, 0.3, 0.5, 0.5, 0.4, 0.6]) },
      ],
    });
    expect(set.models).toEqual({ m: "1", "m-edge": "3" });
    expect(set.rows).toEqual([
      { input: [1, 2], label: 0, expected: { m: [0.9, 0.1], "m-edge": [0.7, 0.3] } },
      { input: [5, 6], label: 1, expected: { m: [0.2, 0.8], "m-edge": [0.4, 0.6] } },
    ]);
  });
});
