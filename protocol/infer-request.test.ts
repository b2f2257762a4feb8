import { describe, expect, it } from "vitest";
import { mutatedBodies, plainAgreesWithSchema } from "../test/support/body-mutations.ts";
import { modelConfig } from "../test/support/heldout.ts";
import { failure } from "../test/support/serving-error.ts";
import {
  checkNamedModel,
  parseInferRequest,
  plainInferCall,
  readInferInputs,
  schemaInferCall,
} from "./infer-request.ts";
import { modelIoOf } from "./model-config.ts";

const io = modelIoOf(modelConfig("digits"));
const limits = { maxBodyBytes: 1 << 20, maxBatch: 4 };
const values = (n: number, fill = 1) => Array.from({ length: n }, () => fill);
const tensor = (over: Record<string, unknown> = {}) => ({
  name: "pixels",
  shape: [1, 64],
  datatype: "FP32",
  data: values(64),
  ...over,
});

const read = (body: unknown) => readInferInputs(parseInferRequest(body), io, limits);

describe("v2 infer requests", () => {
  it("reads flat and nested data into the same rows, and keeps id and cascade", () => {
    const flat = read({ id: "a", inputs: [tensor({ shape: [2, 64], data: [...values(64, 1), ...values(64, 2)] })] });
    const nested = read({ inputs: [tensor({ shape: [2, 64], data: [values(64, 1), values(64, 2)] })] });
    expect(flat.batch).toBe(2);
    expect(Array.from(flat.data)).toEqual(Array.from(nested.data));
    const call = parseInferRequest({ id: "a", parameters: { cascade: "regional", other: 1 }, inputs: [tensor()] });
    expect(call.request.id).toBe("a");
    expect(call.cascade).toBe("regional");
    expect(parseInferRequest({ inputs: [tensor()] }).cascade).toBe("auto");
  });

  it("takes KServe's model_name and model_version when they repeat the path, and refuses another model", () => {
    // What kserve's InferRequest.to_rest() writes: a uuid id, model_name, the inputs.
    const kserve = parseInferRequest({
      id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
      model_name: "digits",
      inputs: [tensor()],
    });
    expect(read(kserve.request).batch).toBe(1);
    expect(() => checkNamedModel(kserve, "digits")).not.toThrow();
    expect(() => checkNamedModel(kserve, "digits", "1")).not.toThrow();
    expect(failure(() => checkNamedModel(kserve, "breast-cancer"))).toMatchObject({
      status: 400,
      message: 'the body\'s "model_name" is "digits" but the path names model "breast-cancer"',
    });
    const versioned = parseInferRequest({ model_name: "digits", model_version: "2", inputs: [tensor()] });
    expect(() => checkNamedModel(versioned, "digits")).not.toThrow();
    expect(failure(() => checkNamedModel(versioned, "digits", "1"))).toMatchObject({
      status: 400,
      message: 'the body\'s "model_version" is "2" but the path names version "1"',
    });
    expect(failure(() => parseInferRequest({ model_name: 7, inputs: [tensor()] }))).toMatchObject({ status: 400 });
  });

  it("accepts requested outputs that exist", () => {
    expect(read({ inputs: [tensor()], outputs: [{ name: "probabilities" }] }).batch).toBe(1);
  });

  it.each([
    [[tensor()], 400, 'body must be a JSON object with "inputs"'],
    [{}, 400, '"inputs" is required'],
    [{ inputs: [] }, 400, '"inputs" must hold at least one tensor'],
    [{ inputs: [tensor()], extra: true }, 400, 'unknown field "extra"'],
    [{ input: [tensor()] }, 400, 'unknown field "input"; did you mean "inputs"?'],
    [{ instances: [[1, 2]] }, 400, 'unknown field "instances"; did you mean "inputs"?'],
    [{ inputs: [tensor({ shape: "1,64" })] }, 400, '"inputs.0.shape" must be an array, got string'],
    [{ inputs: [tensor({ shape: [1.5, 64] })] }, 400, '"inputs.0.shape.0" must hold integers'],
    [{ inputs: [tensor({ shape: [-1, 64] })] }, 400, '"inputs.0.shape.0" must not be negative'],
    [{ inputs: [tensor({ data: "x" })] }, 400, '"inputs.0.data" must be an array, got string'],
    [{ inputs: [{ name: "pixels", shape: [1, 64], data: [] }] }, 400, '"inputs.0.datatype" is required'],
    [
      { inputs: [tensor()], parameters: { cascade: "maybe" } },
      400,
      '"parameters.cascade" must be one of "auto", "edge", "regional", got "maybe"',
    ],
    [{ inputs: [tensor()], parameters: [1] }, 400, '"parameters" must be an object, got array'],
    [{ inputs: [tensor(), tensor()] }, 400, 'model "digits" takes 1 input ("pixels"), got 2'],
    [{ inputs: [tensor({ name: "image" })] }, 400, 'unknown input "image"; model "digits" has input "pixels"'],
    [
      { inputs: [tensor({ datatype: "FP8" })] },
      400,
      'unsupported datatype "FP8"; the protocol\'s are BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES',
    ],
    [
      { inputs: [tensor({ datatype: "INT32" })] },
      400,
      'input "pixels" has datatype INT32; model "digits" expects FP32',
    ],
    [
      { inputs: [tensor({ shape: [1, 63], data: values(63) })] },
      400,
      'input "pixels" has shape [1,63]; model "digits" expects [-1,64]',
    ],
    [{ inputs: [tensor({ shape: [64] })] }, 400, 'input "pixels" has shape [64]; model "digits" expects [-1,64]'],
    [
      { inputs: [tensor({ shape: [0, 64], data: [] })] },
      400,
      'input "pixels" has shape [0,64]; the batch must be at least 1',
    ],
    [{ inputs: [tensor({ shape: [2, 64] })] }, 400, 'input "pixels" has 64 values; shape [2,64] needs 128'],
    [{ inputs: [tensor({ data: values(65) })] }, 400, 'input "pixels" has 65 values; shape [1,64] needs 64'],
    [{ inputs: [tensor({ data: [...values(63), "1"] })] }, 400, 'input "pixels" value 63 must be a number, got string'],
    [{ inputs: [tensor({ data: [...values(63), 1e300] })] }, 400, 'input "pixels" value 63 (1e+300) overflows float32'],
    [
      { inputs: [tensor({ data: [...values(63), Number.NEGATIVE_INFINITY] })] },
      400,
      'input "pixels" value 63 is not a finite number',
    ],
    [{ inputs: [tensor({ shape: [5, 64], data: values(320) })] }, 413, "batch of 5 rows exceeds the limit of 4"],
    [
      { inputs: [tensor({ parameters: { binary_data_size: 256 } })] },
      400,
      'input "pixels" has both "data" and "parameters.binary_data_size"',
    ],
    [
      { inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32" }] },
      400,
      'input "pixels" has no "data" (nor "parameters.binary_data_size")',
    ],
    [
      { inputs: [tensor()], outputs: [{ name: "logits" }] },
      400,
      'unknown output "logits"; model "digits" has output "probabilities"',
    ],
  ])("rejects %#: %s", (body, status, message) => {
    expect(failure(() => read(body))).toEqual({ status, message });
  });
});

describe("binary tensor data", () => {
  const rows = [values(64, 1.5), values(64, -2)];
  const bytes = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
  const binaryTensor = (size: unknown, shape = [2, 64]) => ({
    inputs: [{ name: "pixels", shape, datatype: "FP32", parameters: { binary_data_size: size } }],
  });
  const readBinary = (body: unknown, binary: Uint8Array) =>
    readInferInputs(parseInferRequest(body), io, limits, binary);

  it("reads little-endian FP32 rows from after the JSON, the same rows as JSON data", () => {
    const fromBinary = readBinary(binaryTensor(512), bytes(rows.flat()));
    const fromJson = read({ inputs: [tensor({ shape: [2, 64], data: rows })] });
    expect(fromBinary.batch).toBe(2);
    expect(Array.from(fromBinary.data)).toEqual(Array.from(fromJson.data));
  });

  it.each([
    [
      binaryTensor(511),
      bytes(rows.flat()),
      'input "pixels" has binary_data_size 511; shape [2,64] of FP32 needs 512 bytes',
    ],
    [
      binaryTensor("512"),
      bytes(rows.flat()),
      'input "pixels": "parameters.binary_data_size" must be a whole number of bytes, got "512"',
    ],
    [
      binaryTensor(-4),
      bytes([]),
      'input "pixels": "parameters.binary_data_size" must be a whole number of bytes, got -4',
    ],
    [
      binaryTensor(512),
      bytes(rows[0]!),
      "the body has 256 bytes of binary tensor data after the JSON; binary_data_size says 512",
    ],
    [
      binaryTensor(512),
      bytes([...rows.flat(), 1]),
      "the body has 516 bytes of binary tensor data after the JSON; binary_data_size says 512",
    ],
    [
      binaryTensor(512),
      bytes([...rows[0]!, ...rows[1]!.slice(1), Number.NaN]),
      'input "pixels" value 127 is not a finite number',
    ],
    [{ inputs: [tensor()] }, bytes([1]), "4 bytes of binary data follow the JSON, but no input has binary_data_size"],
  ])("rejects %#: %j", (body, binary, message) => {
    expect(failure(() => readBinary(body, binary))).toEqual({ status: 400, message });
  });

  it("applies the batch limits before reading any bytes", () => {
    expect(failure(() => readBinary(binaryTensor(5 * 256, [5, 64]), bytes(values(320))))).toEqual({
      status: 413,
      message: "batch of 5 rows exceeds the limit of 4",
    });
  });
});

describe("plainInferCall", () => {
  const valid = [
    { inputs: [{ name: "pixels", shape: [1, 2], datatype: "FP32", data: [1, 2] }] },
    {
      id: "a",
      model_name: "m",
      model_version: "1",
      parameters: { cascade: "edge", other: 1 },
      inputs: [{ name: "x", shape: [2, 1], datatype: "INT8", parameters: { p: 1 }, data: [[1], [2]] }],
      outputs: [{ name: "probabilities", parameters: { binary_data: false } }],
    },
  ];
  const bodies = mutatedBodies(valid);

  it(`accepts only what the schema accepts, with the same result (${bodies.length} variants)`, () => {
    expect(bodies.length).toBeGreaterThan(300);
    const accepted = plainAgreesWithSchema(bodies, plainInferCall, schemaInferCall);
    expect(accepted).toBeGreaterThan(20);
    expect(accepted).toBeLessThan(bodies.length / 2);
  });
});
