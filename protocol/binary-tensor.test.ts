import { describe, expect, it } from "vitest";
import { failure } from "../test/support/serving-error.ts";
import {
  bytesOfFloat32,
  encodeInferResponse,
  float32FromBytes,
  INFERENCE_HEADER_LENGTH,
  readInferBody,
  wantsBinaryOutput,
} from "./binary-tensor.ts";
import { toInferResponse } from "./responses.ts";
import type { InferRequest } from "./types.ts";

const encoder = new TextEncoder();
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe("readInferBody", () => {
  const json = encoder.encode('{"inputs":[]}');
  const tail = new Uint8Array([0, 0, 128, 63]);

  it("without Inference-Header-Content-Length, the body is JSON: a JSON type, none, or octet-stream (as Triton reads it)", () => {
    for (const type of [
      undefined,
      "",
      "application/json",
      "application/json; charset=utf-8",
      "application/octet-stream",
    ]) {
      expect(readInferBody(json, undefined, type)).toEqual({ json: { inputs: [] }, binary: new Uint8Array() });
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      expect(failure(() => readInferBody(json, undefined, type))).toMatchObject({
        status: 415,
        message: `content-type must be application/json or application/octet-stream (read as JSON), got ${type}`,
      });
    }
    // Binary tensor bytes without the header are not JSON: a 400 naming why, not a guess.
    expect(failure(() => readInferBody(concat(json, tail), undefined, "application/octet-stream"))).toMatchObject({
      status: 400,
    });
  });

  it("with it, splits the JSON part from the bytes after it, whatever the content type", () => {
    for (const type of [
      undefined,
      "application/octet-stream",
      "application/json",
      "application/x-www-form-urlencoded",
    ]) {
      const body = readInferBody(concat(json, tail), String(json.length), type);
      expect(body.json).toEqual({ inputs: [] });
      expect(Array.from(body.binary)).toEqual([0, 0, 128, 63]);
    }
  });

  it.each(["", "x", "-1", "1.5", "18", " "])("400 for a header of %j (body of 17 bytes)", (header) => {
    expect(failure(() => readInferBody(concat(json, tail), header, undefined))).toEqual({
      status: 400,
      message: `${INFERENCE_HEADER_LENGTH} must be the length in bytes of the JSON part of the body (at most 17), got "${header}"`,
    });
  });

  it("400 when the JSON part is cut short or empty", () => {
    expect(failure(() => readInferBody(concat(json, tail), "5", undefined)).message).toMatch(/^invalid JSON/);
    expect(failure(() => readInferBody(tail, "0", undefined)).message).toBe(
      "request body is empty; send a JSON object",
    );
  });
});

describe("float32 bytes", () => {
  it("are little-endian both ways, from unaligned offsets too", () => {
    const values = Float32Array.from([1, -2.5, 3.4028234663852886e38, 1e-45]);
    const bytes = bytesOfFloat32(values);
    expect(Array.from(bytes.subarray(0, 4))).toEqual([0, 0, 128, 63]);
    const shifted = concat(new Uint8Array([9]), bytes).subarray(1);
    expect(Array.from(float32FromBytes(shifted))).toEqual(Array.from(values));
  });
});

describe("wantsBinaryOutput", () => {
  const request = (parameters?: Record<string, unknown>, own?: Record<string, unknown>): InferRequest => ({
    inputs: [],
    ...(parameters ? { parameters } : {}),
    outputs: own ? [{ name: "other" }, { name: "p", parameters: own }] : undefined,
  });

  it.each([
    [undefined, undefined, false],
    [{ binary_data_output: true }, undefined, true],
    [{ binary_data_output: false }, undefined, false],
    [undefined, { binary_data: true }, true],
    [{ binary_data_output: true }, { binary_data: false }, false],
    [{ binary_data_output: false }, { binary_data: true }, true],
    [{ binary_data_output: true }, {}, true],
  ])("request %j, output %j -> %s", (parameters, own, binary) => {
    expect(wantsBinaryOutput(request(parameters, own), "p")).toBe(binary);
  });

  it("400 for flags that are not booleans, naming them", () => {
    expect(failure(() => wantsBinaryOutput(request({ binary_data_output: "true" }), "p"))).toEqual({
      status: 400,
      message: '"parameters.binary_data_output" must be true or false, got "true"',
    });
    expect(failure(() => wantsBinaryOutput(request(undefined, { binary_data: 1 }), "p"))).toEqual({
      status: 400,
      message: '"outputs.1.parameters.binary_data" must be true or false, got 1',
    });
  });
});

describe("encodeInferResponse", () => {
  const probs = Float32Array.from([0.25, 0.75, 0.5, 0.5]);
  const response = (binary: boolean) =>
    toInferResponse({ model: "m", version: "2", id: "q", outputName: "p", probs, batch: 2, classes: 2, binary });

  it("JSON: the values in data", () => {
    const { headers, body } = encodeInferResponse(response(false), probs, false);
    expect(headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(body as string).outputs[0]).toEqual({
      name: "p",
      shape: [2, 2],
      datatype: "FP32",
      data: [0.25, 0.75, 0.5, 0.5],
    });
  });

  it("binary: the JSON part names the size, the raw values follow it", () => {
    const { headers, body } = encodeInferResponse(response(true), probs, true);
    const length = Number(headers[INFERENCE_HEADER_LENGTH]);
    expect(headers["content-type"]).toBe("application/octet-stream");
    const bytes = body as Uint8Array;
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, length)));
    expect(header).toEqual({
      model_name: "m",
      model_version: "2",
      id: "q",
      outputs: [{ name: "p", shape: [2, 2], datatype: "FP32", parameters: { binary_data_size: 16 } }],
    });
    expect(Array.from(float32FromBytes(bytes.subarray(length)))).toEqual([0.25, 0.75, 0.5, 0.5]);
  });
});
