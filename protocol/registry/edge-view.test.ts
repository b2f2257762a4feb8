import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../model-config.ts";
import { edgeServedModel, edgeVersionFor } from "./edge-view.ts";
import { firstServedState } from "./served-state.ts";

function edgeConfig(against: Record<string, string>): ModelConfig {
  const versions = Object.fromEntries(
    Object.entries(against).map(([v, a]) => [
      v,
      {
        file: "model.onnx",
        sha256: "0".repeat(64),
        bytes: 10,
        accuracy: { test: 0.9 },
        cascade: {
          against: { model: "digits", version: a },
          threshold: 0.8,
          agreementTarget: 0.99,
          calibratedOn: "validation",
          test: { edgeShare: 0.9, agreement: 1, cascadeAccuracy: 0.98 },
        },
      },
    ]),
  );
  return {
    name: "digits-edge",
    platform: "onnxruntime_onnx",
    standsFor: "digits",
    inputs: [{ name: "pixels", datatype: "FP32", shape: [-1, 64] }],
    outputs: [{ name: "probabilities", datatype: "FP32", shape: [-1, 10] }],
    labels: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    maxBatchSize: 64,
    version: Object.keys(against)[0]!,
    versions,
  };
}

describe("the edge variant that stands for a full version", () => {
  it("takes the newest calibrated against that version, else against an older one", () => {
    const edge = edgeConfig({ "1": "1", "2": "2", "3": "1", "4": "3" });
    expect(edgeVersionFor(edge, "1")).toBe("3"); // recalibrated against 1 after 2 was
    expect(edgeVersionFor(edge, "2")).toBe("2");
    expect(edgeVersionFor(edge, "3")).toBe("4");
    expect(edgeVersionFor(edge, "9")).toBe("4"); // no new edge variant: the last one stands in
    expect(edgeVersionFor(edgeConfig({ "5": "7" }), "6")).toBeUndefined();
  });

  it("puts the chosen version's config in the isolates' view", () => {
    const entry = edgeServedModel(firstServedState("digits", "2", new Date(0)), edgeConfig({ "1": "1", "2": "2" }));
    expect(entry).toMatchObject({ revision: 1, version: "2", edge: { version: "2", config: { version: "2" } } });
    expect(edgeServedModel(firstServedState("digits", "2", new Date(0)), undefined).edge).toBeUndefined();
  });
});
