import { describe, expect, it } from "vitest";
import { BadRequest } from "../../protocol/errors.ts";
import { grpcInferCall } from "./infer-call.ts";
import type { GrpcModelInferRequest } from "./messages.ts";

/** A request as proto.ts decodes one: every field present with proto3's defaults. */
const request = (over: Partial<GrpcModelInferRequest>): GrpcModelInferRequest => ({
  model_name: "digits",
  model_version: "",
  id: "",
  parameters: {},
  inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 2], parameters: {}, contents: null }],
  outputs: [],
  raw_input_contents: [],
  ...over,
});
const raw = new Uint8Array(new Float32Array([1, 2]).buffer);

describe("grpcInferCall", () => {
  it("raw_input_contents become binary tensor data with binary_data_size, as HTTP reads them", () => {
    const converted = grpcInferCall(request({ raw_input_contents: [raw], id: "r1", model_version: "2" }));
    expect(converted).toMatchObject({ model: "digits", version: "2" });
    expect(converted.binary).toBe(raw);
    expect(converted.call.request).toEqual({
      id: "r1",
      inputs: [{ name: "pixels", shape: [1, 2], datatype: "FP32", parameters: { binary_data_size: 8 } }],
    });
  });

  it("contents of the datatype's field become data; proto3's empty strings are 'not given'", () => {
    const converted = grpcInferCall(
      request({
        inputs: [
          { name: "pixels", datatype: "FP32", shape: [1, 2], contents: { fp32_contents: [1, 2], int_contents: [] } },
        ],
        outputs: [{ name: "probabilities", parameters: {} }],
      }),
    );
    expect(converted.version).toBeUndefined();
    expect(converted.binary).toHaveLength(0);
    expect(converted.call.request).toEqual({
      inputs: [{ name: "pixels", shape: [1, 2], datatype: "FP32", data: [1, 2] }],
      outputs: [{ name: "probabilities" }],
    });
  });

  it("parameters keep their one value; the cascade parameter is read as over HTTP", () => {
    const converted = grpcInferCall(
      request({
        raw_input_contents: [raw],
        parameters: {
          cascade: { parameter_choice: "string_param", string_param: "regional", bool_param: false },
          priority: { parameter_choice: "int64_param", int64_param: 2 },
        },
      }),
    );
    expect(converted.call.request.parameters).toEqual({ cascade: "regional", priority: 2 });
    expect(converted.call.cascade).toBe("regional");
  });

  it("several raw inputs are laid out one after the other", () => {
    const two = grpcInferCall(
      request({
        inputs: [
          { name: "a", datatype: "FP32", shape: [1, 2] },
          { name: "b", datatype: "FP32", shape: [1, 2] },
        ],
        raw_input_contents: [raw, raw],
      }),
    );
    expect(Array.from(two.binary)).toEqual([...raw, ...raw]);
  });

  it.each([
    ["no model_name", { model_name: "" }, /"model_name" is required/],
    [
      "raw contents for fewer inputs",
      { raw_input_contents: [raw, raw] },
      /has 2 entries; it needs one per input, in order \(1\)/,
    ],
    [
      "raw contents beside contents",
      {
        inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
        raw_input_contents: [raw],
      },
      /has "contents.fp32_contents" and "raw_input_contents": send one of them/,
    ],
    [
      "raw contents of the wrong size",
      { raw_input_contents: [raw.subarray(0, 4)] },
      /has 4 bytes; input "pixels" of shape \[1,2\] FP32 needs 8/,
    ],
    [
      "values in another datatype's field",
      { inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 2], contents: { fp64_contents: [1, 2] } }] },
      /FP32 but its values are in "contents.fp64_contents"; FP32 goes in "contents.fp32_contents"/,
    ],
    [
      "HTTP's binary_data_size without raw contents",
      {
        inputs: [
          {
            name: "pixels",
            datatype: "FP32",
            shape: [1, 2],
            parameters: { binary_data_size: { parameter_choice: "int64_param", int64_param: 8 } },
          },
        ],
      },
      /over gRPC send the bytes in "raw_input_contents"/,
    ],
    ["no inputs (the HTTP schema's own check)", { inputs: [] }, /must hold at least one tensor/],
  ])("%s: 400 naming the field", (_, over, message) => {
    expect(() => grpcInferCall(request(over as Partial<GrpcModelInferRequest>))).toThrow(BadRequest);
    expect(() => grpcInferCall(request(over as Partial<GrpcModelInferRequest>))).toThrow(message);
  });
});
