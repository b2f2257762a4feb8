import { describe, expect, it } from "vitest";
import { ImportConflict, type ImportFacts, planImport } from "./configs.ts";

const tensors = { inputName: "x", width: 4, outputName: "p", classes: 2 };
const variant = (sha: string) => ({
  file: { file: "model.onnx", sha256: sha.repeat(64), bytes: 100 },
  tensors,
  weights: "fp32" as const,
  accuracy: { validation: 0.9, test: 0.91 },
});
const figures = { edgeShare: 0.8, agreement: 1, cascadeAccuracy: 0.91 };
const facts: ImportFacts = {
  name: "m",
  labels: ["no", "yes"],
  split: "stratified, seed 0: 50 calibration / 50 held-out rows of d.csv",
  full: variant("a"),
  edge: {
    ...variant("b"),
    threshold: 0.7,
    agreementTarget: 0.99,
    proof: { confidence: 0.95, provenAgreement: 0.9906, rows: 320, disagreements: 0 },
    figures: { validation: figures, test: figures },
  },
};
const none = { fullDirs: [], edgeDirs: [] };

describe("planImport", () => {
  it("gives a new name version 1 of both, which serves, the edge calibrated against the full model's", () => {
    const plan = planImport(facts, none);
    expect(plan).toMatchObject({ fullVersion: "1", edgeVersion: "1", serves: true });
    expect(plan.fullConfig).toMatchObject({
      name: "m",
      version: "1",
      labels: ["no", "yes"],
      inputs: [{ name: "x", datatype: "FP32", shape: [-1, 4] }],
      maxBatchSize: 256,
    });
    expect(plan.edgeConfig).toMatchObject({ name: "m-edge", standsFor: "m", version: "1", maxBatchSize: 64 });
    expect((plan.edgeConfig!.versions as Record<string, { cascade: unknown }>)["1"]!.cascade).toMatchObject({
      against: { model: "m", version: "1" },
      threshold: 0.7,
      agreementTarget: 0.99,
      confidence: 0.95,
      provenAgreement: 0.9906,
      test: figures,
    });
  });

  it("adds the next free version to an existing model, keeps the served one and unknown fields", () => {
    const first = planImport(facts, none);
    const existing = {
      full: { ...first.fullConfig, owner: "team-a" },
      edge: first.edgeConfig,
      fullDirs: ["1", "3"],
      edgeDirs: ["1"],
    };
    const plan = planImport(facts, existing);
    expect(plan).toMatchObject({ fullVersion: "4", edgeVersion: "2", serves: false });
    expect(plan.fullConfig).toMatchObject({ version: "1", owner: "team-a" });
    expect(Object.keys(plan.fullConfig.versions as object)).toEqual(["1", "4"]);
    expect(
      (plan.edgeConfig!.versions as Record<string, { cascade: { against: unknown } }>)["2"]!.cascade.against,
    ).toEqual({
      model: "m",
      version: "4",
    });
  });

  it("refuses a version whose tensors or labels differ from the model's", () => {
    const existing = { ...none, full: planImport(facts, none).fullConfig };
    expect(() => planImport({ ...facts, labels: ["a", "b"] }, existing)).toThrow(ImportConflict);
    expect(() =>
      planImport({ ...facts, full: { ...variant("a"), tensors: { ...tensors, width: 5 } } }, existing),
    ).toThrow(/has input \["x",4\] and the new files have \["x",5\]; .* import this one under a new --name/);
  });

  it("without an edge variant writes the full model only", () => {
    const { edge: _, ...fullOnly } = facts;
    const plan = planImport(fullOnly, none);
    expect(plan.edgeConfig).toBeUndefined();
    expect(plan.edgeVersion).toBeUndefined();
  });
});
