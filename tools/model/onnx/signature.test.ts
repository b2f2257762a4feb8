import { describe, expect, it } from "vitest";
import { nearestCentroidMlp, stumpForest } from "../../../test/support/onnx-models.ts";
import { DataType, decodeModel, type ModelProto, makeModel } from "./proto.ts";
import { inspectSignature } from "./signature.ts";

const info = (name: string, elemType: number, dims: (number | string)[]) => ({
  name,
  type: {
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) },
    },
  },
});

/** A one-node graph with the given inputs and outputs (inspection reads only the signature). */
const graph = (inputs: object[], outputs: object[], initializer: object[] = []): ModelProto =>
  makeModel({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "g",
      node: [{ opType: "Identity", input: ["x"], output: ["y"] }],
      input: inputs,
      output: outputs,
      initializer,
    },
  });

describe("inspectSignature", () => {
  it("reads an MLP: one FP32 input [-1, N], probabilities [-1, C]", () => {
    expect(
      inspectSignature(
        decodeModel(
          nearestCentroidMlp(
            [
              [0, 0],
              [1, 1],
              [2, 0],
            ],
            1,
          ),
        ),
      ),
    ).toEqual({
      input: { name: "x", width: 2 },
      probabilities: { name: "probs", classes: 3 },
      opset: 13,
      int8: false,
    });
  });

  it("reads a tree ensemble by type and shape, not position: labels first, probabilities second", () => {
    expect(inspectSignature(decodeModel(stumpForest(3, [{ feature: 0, threshold: 0 }])))).toEqual({
      input: { name: "features", width: 3 },
      probabilities: { name: "probabilities", classes: 2 },
      label: { name: "label" },
      opset: 13,
      int8: false,
    });
  });

  it("leaves a symbolic class count open, and skips initializers listed as inputs", () => {
    const sig = inspectSignature(
      graph(
        [info("x", DataType.FLOAT, ["n", 4]), info("w", DataType.FLOAT, [4, 2])],
        [info("p", DataType.FLOAT, ["n", "classes"])],
        [{ name: "w", dataType: DataType.FLOAT, dims: [4, 2], floatData: Array(8).fill(0) }],
      ),
    );
    expect(sig.probabilities).toEqual({ name: "p", classes: undefined });
    expect(sig.input).toEqual({ name: "x", width: 4 });
  });

  it("reads a batch fixed at export (torch.onnx.export without dynamic_axes, skl2onnx's [1, N]) as the batch its runs take", () => {
    const sig = inspectSignature(graph([info("x", DataType.FLOAT, [1, 13])], [info("p", DataType.FLOAT, [1, 3])]));
    expect(sig.input).toEqual({ name: "x", width: 13, fixedBatch: 1 });
    expect(sig.probabilities).toEqual({ name: "p", classes: 3 });
    expect(
      inspectSignature(graph([info("x", DataType.FLOAT, [8, 4])], [info("p", DataType.FLOAT, [8, 2])])).input,
    ).toEqual({ name: "x", width: 4, fixedBatch: 8 });
  });

  it.each<[string, object[], object[], string]>([
    [
      "two inputs",
      [info("a", 1, ["n", 2]), info("b", 1, ["n", 2])],
      [info("p", 1, ["n", 2])],
      "the graph has 2 inputs (a, b)",
    ],
    [
      "an int input",
      [info("x", DataType.INT64, ["n", 2])],
      [info("p", 1, ["n", 2])],
      'input "x" is INT64 [n, 2]; it must be FP32 [-1, N]',
    ],
    ["an open width", [info("x", 1, ["n", "f"])], [info("p", 1, ["n", 2])], "the number of features must be fixed"],
    ["no probabilities", [info("x", 1, ["n", 2])], [info("l", DataType.INT64, ["n"])], "has 0 FP32 [-1, C] outputs"],
    [
      "two probability outputs",
      [info("x", 1, ["n", 2])],
      [info("p", 1, ["n", 2]), info("q", 1, ["n", 2])],
      "has 2 FP32 [-1, C] outputs (p, q)",
    ],
    ["one class", [info("x", 1, ["n", 2])], [info("p", 1, ["n", 1])], "a classifier needs at least 2 classes"],
    ["a 3-D output", [info("x", 1, ["n", 2])], [info("p", 1, ["n", 2, 2])], 'output "p" is FP32 [n, 2, 2]'],
    [
      "a ZipMap",
      [info("x", 1, ["n", 2])],
      [info("p", 1, ["n", 2]), { name: "z", type: { sequenceType: { elemType: {} } } }],
      'output "z" is a sequence (not one a ZipMap makes, which import removes',
    ],
  ])("refuses %s, saying what is wrong", (_, inputs, outputs, message) => {
    expect(() => inspectSignature(graph(inputs, outputs))).toThrow(message);
  });
});
