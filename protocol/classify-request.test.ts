import { describe, expect, it } from "vitest";
import { mutatedBodies, plainAgreesWithSchema } from "../test/support/body-mutations.ts";
import { modelConfig } from "../test/support/heldout.ts";
import { failure } from "../test/support/serving-error.ts";
import { parseClassifyRequest, plainClassifyCall, readClassifyInputs, schemaClassifyCall } from "./classify-request.ts";
import { modelIoOf } from "./model-config.ts";

const io = modelIoOf(modelConfig("digits"));
const limits = { maxBodyBytes: 1 << 20, maxBatch: 8 };
const row = (fill = 3) => Array.from({ length: 64 }, () => fill);

describe("parseClassifyRequest", () => {
  it("reads model, inputs, version, id and the cascade mode (default auto)", () => {
    expect(parseClassifyRequest({ model: "digits", inputs: [] })).toEqual({
      model: "digits",
      version: undefined,
      id: undefined,
      cascade: "auto",
      inputs: [],
    });
    const call = parseClassifyRequest({
      model: "digits",
      inputs: [1],
      id: "r1",
      version: "2",
      parameters: { cascade: "edge" },
    });
    expect(call).toMatchObject({ version: "2", id: "r1", cascade: "edge" });
  });

  it.each([
    [[], 'body must be a JSON object with "model" and "inputs"'],
    ["digits", 'body must be a JSON object with "model" and "inputs"'],
    [null, 'body must be a JSON object with "model" and "inputs"'],
    [{ inputs: [] }, '"model" is required'],
    [{ model: "digits" }, '"inputs" is required'],
    [{ model: 7, inputs: [] }, '"model" must be a string, got number'],
    [{ model: "", inputs: [] }, '"model" must not be empty'],
    [{ model: "digits", inputs: {} }, '"inputs" must be an array, got object'],
    [{ model: "digits", inputs: [], extra: 1 }, 'unknown field "extra"'],
    [{ model: "digits", input: [] }, 'unknown field "input"; did you mean "inputs"?'],
    [{ model: "digits", instances: [[1]] }, 'unknown field "instances"; did you mean "inputs"?'],
    [{ modle: "digits", inputs: [] }, 'unknown field "modle"; did you mean "model"?'],
    [
      { model: "digits", inputs: [], parameters: { cascade: "cloud" } },
      '"parameters.cascade" must be one of "auto", "edge", "regional", got "cloud"',
    ],
    [
      { model: "digits", inputs: [], parameters: { cascade: 1 } },
      '"parameters.cascade" must be one of "auto", "edge", "regional", got 1',
    ],
    [{ model: "digits", inputs: [], parameters: { temperature: 1 } }, 'unknown field "parameters.temperature"'],
    [{ model: "digits", inputs: [], parameters: [] }, '"parameters" must be an object, got array'],
    [{ model: "digits", inputs: [], version: "latest" }, '"version" must be a version number such as "1"'],
    [{ model: "digits", inputs: [], id: 5 }, '"id" must be a string, got number'],
  ])("400 for %j", (body, message) => {
    expect(failure(() => parseClassifyRequest(body))).toEqual({ status: 400, message });
  });
});

describe("readClassifyInputs", () => {
  it("reads one flat row and a batch of rows into float32", () => {
    const one = readClassifyInputs(row(2.5), io, limits);
    expect(one.batch).toBe(1);
    expect(one.data).toHaveLength(64);
    expect(one.data[0]).toBe(2.5);
    const two = readClassifyInputs([row(1), row(0.1)], io, limits);
    expect(two.batch).toBe(2);
    expect(two.data[64]).toBe(Math.fround(0.1));
  });

  it.each([
    [[], 400, '"inputs" must not be empty; send 64 numbers or rows of them'],
    [row().slice(1), 400, '"inputs" has 63 values; model "digits" expects rows of 64'],
    [
      [...row(), ...row()],
      400,
      '"inputs" has 128 values; model "digits" expects rows of 64 (send several rows as [[...], [...]])',
    ],
    [[row(), row().slice(2)], 400, 'inputs[1] has 62 values; model "digits" expects 64'],
    [[row(), 5], 400, "inputs[1] must be an array of 64 numbers"],
    [[row(), [...row().slice(1), "7"]], 400, "inputs[1][63] must be a number, got string"],
    [[[...row().slice(1), null]], 400, "inputs[0][63] must be a number, got null"],
    [[...row().slice(1), [1]], 400, "inputs[63] must be a number, got array"],
    [[...row().slice(1), Number.POSITIVE_INFINITY], 400, "inputs[63] is not a finite number"],
    [[...row().slice(1), Number.NaN], 400, "inputs[63] is not a finite number"],
    [[...row().slice(1), 1e39], 400, "inputs[63] (1e+39) overflows float32"],
    [[...row().slice(1), -3.5e38], 400, "inputs[63] (-3.5e+38) overflows float32"],
    [Array.from({ length: 9 }, () => row()), 413, "batch of 9 rows exceeds the limit of 8"],
  ])("rejects %#", (inputs, status, message) => {
    expect(failure(() => readClassifyInputs(inputs as unknown[], io, limits))).toEqual({ status, message });
  });

  it("takes the float32 maximum itself and values that round down to it", () => {
    const max = 3.4028234663852886e38;
    const rows = readClassifyInputs([...row().slice(2), max, -3.4028235e38], io, limits);
    expect(rows.data[62]).toBe(max);
    expect(rows.data[63]).toBe(-max);
  });

  it("applies the model's own batch limit when it is the smaller", () => {
    const small = { ...io, maxBatchSize: 2 };
    expect(failure(() => readClassifyInputs([row(), row(), row()], small, limits))).toEqual({
      status: 413,
      message: "batch of 3 rows exceeds the limit of 2",
    });
  });
});

describe("plainClassifyCall", () => {
  const valid = [
    { model: "digits", inputs: [1, 2] },
    { model: "digits", inputs: [[1], [2]], version: "3", id: "r", parameters: { cascade: "regional" } },
    { model: "m", inputs: [], parameters: {} },
  ];
  const bodies = mutatedBodies(valid);

  it(`accepts only what the schema accepts, with the same result (${bodies.length} variants)`, () => {
    expect(bodies.length).toBeGreaterThan(300);
    const accepted = plainAgreesWithSchema(bodies, plainClassifyCall, schemaClassifyCall);
    expect(accepted).toBeGreaterThan(20);
    expect(accepted).toBeLessThan(bodies.length / 2);
  });
});
