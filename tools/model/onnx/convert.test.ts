import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nearestCentroidMlp, SAMPLE_CENTROIDS } from "../../../test/support/onnx-models.ts";
import { ConversionError, convertForServing, modelLabels } from "./convert.ts";
import { DataType, decodeModel, EXTERNAL_DATA } from "./proto.ts";
import { inspectSignature } from "./signature.ts";

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/converters/${name}`, import.meta.url));

describe("convertForServing", () => {
  it("leaves a servable model as it is", () => {
    const model = decodeModel(nearestCentroidMlp(SAMPLE_CENTROIDS, 2));
    expect(convertForServing(model).conversions).toEqual([]);
  });

  it("serves the tensor a ZipMap was built from, and reads the labels from it", () => {
    const source = decodeModel(fixture("lr-strings.onnx"));
    const { model, conversions, labels } = convertForServing(source);
    expect(conversions.map((c) => c.step)).toEqual(["zipmap"]);
    expect(labels).toEqual({
      labels: ["benign", "malignant"],
      kind: "names",
      source: 'ZipMap "ZipMap" (classlabels_strings)',
    });
    expect(model.graph!.node.map((n) => n.opType)).not.toContain("ZipMap");
    expect(inspectSignature(model).probabilities).toEqual({ name: "probabilities", classes: 2 });
    // The source is not modified.
    expect(source.graph!.node.map((n) => n.opType)).toContain("ZipMap");
  });

  it("casts an FP64 input (same name, FP32) and FP64 probabilities (same name, FP32)", () => {
    const { model, conversions } = convertForServing(decodeModel(fixture("lr-fp64.onnx")));
    expect(conversions.map((c) => c.step)).toEqual(["input-cast", "output-cast"]);
    const graph = model.graph!;
    expect(graph.input[0]).toMatchObject({ name: "X", type: { tensorType: { elemType: DataType.FLOAT } } });
    expect(graph.node[0]).toMatchObject({ opType: "Cast", input: ["X"] });
    expect(graph.node.at(-1)).toMatchObject({ opType: "Cast", output: ["output_probability"] });
    expect(inspectSignature(model).input).toEqual({ name: "X", width: 13 });
    expect(
      convertForServing(decodeModel(fixture("lr-fp64.onnx")), { castInput: false }).conversions.map((c) => c.step),
    ).toEqual(["output-cast"]);
  });

  it("inlines external data through the reader, or says it cannot", () => {
    const source = decodeModel(fixture("torch-mlp/model.onnx"));
    expect(() => convertForServing(source)).toThrow(ConversionError);
    const data = fixture("torch-mlp/model.onnx.data");
    const { model, conversions } = convertForServing(source, { readExternal: () => new Uint8Array(data) });
    expect(conversions[0]).toEqual({
      step: "external-data",
      detail: "6 initializers (1204 bytes) copied from model.onnx.data into the model file",
    });
    expect(model.graph!.initializer.every((t) => t.dataLocation !== EXTERNAL_DATA)).toBe(true);
    expect(() => convertForServing(source, { readExternal: () => new Uint8Array(8) })).toThrow(
      /is at bytes \d+\.\.\d+ of model\.onnx\.data, which has 8; the file does not belong to this model/,
    );
  });

  it("appends a Softmax only when asked, never after one", () => {
    const torch = decodeModel(fixture("torch-mlp/model.onnx"));
    const readExternal = () => new Uint8Array(fixture("torch-mlp/model.onnx.data"));
    expect(convertForServing(torch, { readExternal }).model.graph!.node.at(-1)!.opType).toBe("Gemm");
    const { model } = convertForServing(torch, { readExternal, softmax: true });
    expect(model.graph!.node.at(-1)).toMatchObject({ opType: "Softmax", output: ["output"] });
    expect(() => convertForServing(decodeModel(nearestCentroidMlp(SAMPLE_CENTROIDS, 2)), { softmax: true })).toThrow(
      /already comes out of a Softmax/,
    );
  });

  it("reads a classifier's labels when there is no ZipMap", () => {
    expect(modelLabels(decodeModel(nearestCentroidMlp(SAMPLE_CENTROIDS, 2)))).toBeUndefined();
    expect(modelLabels(decodeModel(fixture("gbdt-softmax.onnx")))?.labels).toEqual(["0", "1", "2"]);
  });
});
