import { describe, expect, it } from "vitest";
import { nearestCentroidMlp } from "../../../test/support/onnx-models.ts";
import { DataType, decodeModel, encodeModel, int64, makeModel } from "../onnx/proto.ts";
import { floatValues, quantizeWeights } from "./graph.ts";
import { dequantize } from "./per-channel.ts";

describe("quantizeWeights", () => {
  const source = decodeModel(
    nearestCentroidMlp(
      [
        [0, 0],
        [2, 1],
        [1, 3],
      ],
      2,
    ),
  );

  it("replaces MatMul and Gemm weights by int8 + scale + zero point behind DequantizeLinear, and nothing else", () => {
    const { model, tensors } = quantizeWeights(source);
    expect(tensors).toEqual([
      { name: "w1", dims: [2, 4], axis: 1 },
      { name: "w2", dims: [3, 4], axis: 0 },
    ]);
    const graph = model.graph!;
    expect(graph.node.slice(2)).toEqual(source.graph!.node);
    const byName = new Map(graph.initializer.map((t) => [t.name, t]));
    expect(byName.has("w1")).toBe(false);
    expect(byName.get("w1_quantized")!.dataType).toBe(DataType.INT8);
    expect(byName.get("w2_scale")!.dims.map(int64)).toEqual([3]);
    // Biases stay float; the dequantized weights are within half a step of the originals.
    expect(byName.get("b2")).toBe(source.graph!.initializer.find((t) => t.name === "b2"));
    const original = floatValues(source.graph!.initializer.find((t) => t.name === "w2")!);
    const q = byName.get("w2_quantized")!;
    const back = dequantize(
      {
        q: new Int8Array(q.rawData.buffer, q.rawData.byteOffset, q.rawData.byteLength),
        scales: floatValues(byName.get("w2_scale")!),
        axis: 0,
      },
      3,
      4,
    );
    for (let i = 0; i < original.length; i++) expect(Math.abs(back[i]! - original[i]!)).toBeLessThan(0.05);
    // The source is untouched, and the result encodes.
    expect(source.graph!.initializer.some((t) => t.name === "w1")).toBe(true);
    expect(decodeModel(encodeModel(model)).graph!.node).toHaveLength(7);
  });

  it("refuses FP64 weights, naming them and the float32 re-export", () => {
    // The same MLP as exported from float64 data: its weights as DOUBLE.
    const fp64 = {
      ...source,
      graph: {
        ...source.graph!,
        initializer: source.graph!.initializer.map((t) =>
          t.dims.length === 2 ? { ...t, dataType: DataType.DOUBLE, floatData: [], rawData: new Uint8Array(8) } : t,
        ),
      },
    } as typeof source;
    expect(() => quantizeWeights(fp64)).toThrow(
      "the model's MatMul/Gemm weights are FP64 (w1 [2, 4], w2 [3, 4]), and int8 quantization starts from FP32 ones. " +
        "Re-export the model in float32 (skl2onnx: to_onnx(model, X.astype(numpy.float32)); torch: model.float() " +
        "before torch.onnx.export) and import that, or pass an edge variant of your own with --edge",
    );
  });

  it("leaves a weight alone that another kind of node also reads", () => {
    const shared = makeModel({
      irVersion: 8,
      opsetImport: [{ domain: "", version: 13 }],
      graph: {
        name: "shared",
        input: [],
        output: [],
        initializer: [
          { name: "w", dims: [2, 2], dataType: DataType.FLOAT, floatData: [1, 2, 3, 4] },
          { name: "v", dims: [2, 2], dataType: DataType.FLOAT, floatData: [1, 0, 0, 1] },
        ],
        node: [
          { opType: "MatMul", input: ["x", "w"], output: ["y"] },
          { opType: "Add", input: ["y", "w"], output: ["z"] },
          { opType: "MatMul", input: ["z", "v"], output: ["out"] },
        ],
      },
    });
    expect(quantizeWeights(shared).tensors.map((t) => t.name)).toEqual(["v"]);
  });

  it("refuses below opset 13 and without MatMul/Gemm weights", () => {
    expect(() => quantizeWeights(decodeModel(nearestCentroidMlp([[0], [1]], 1, 12)))).toThrow("imports opset 12");
    const noWeights = makeModel({
      irVersion: 8,
      opsetImport: [{ domain: "", version: 13 }],
      graph: { name: "n", node: [{ opType: "Relu", input: ["x"], output: ["y"] }] },
    });
    expect(() => quantizeWeights(noWeights)).toThrow("no FP32 MatMul or Gemm weights to quantize");
  });
});
