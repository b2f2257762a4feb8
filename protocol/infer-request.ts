import * as v from "valibot";
import { BadRequest } from "./errors.ts";
import type { RequestLimits } from "./limits.ts";
import type { ModelSignature } from "./model-config.ts";
import { parseOrDescribe, plainObject } from "./schema-message.ts";
import { checkBatch, type InputRows, writeFloat32 } from "./tensor.ts";
import { CASCADE_MODES, type CascadeMode, DATATYPES, type Datatype, type InferRequest } from "./types.ts";

const parametersSchema = plainObject(v.record(v.string(), v.unknown()));
const tensorSchema = v.strictObject({
  name: v.string(),
  shape: v.array(v.pipe(v.number(), v.integer("must hold integers"), v.minValue(0, "must not be negative"))),
  datatype: v.string(),
  parameters: v.optional(parametersSchema),
  data: v.array(v.unknown()),
});
const inferSchema = v.strictObject({
  id: v.optional(v.string()),
  parameters: v.optional(parametersSchema),
  inputs: v.pipe(v.array(plainObject(tensorSchema)), v.minLength(1, "must hold at least one tensor")),
  outputs: v.optional(
    v.array(plainObject(v.strictObject({ name: v.string(), parameters: v.optional(parametersSchema) }))),
  ),
});
const cascadeSchema = v.optional(v.picklist(CASCADE_MODES));

/** A structurally valid v2 infer body plus the parameters this system reads from it. */
export interface InferCall {
  request: InferRequest;
  cascade: CascadeMode;
}

/** Check the fields of a v2 infer body (400 naming the field), before the model is looked up. */
export function parseInferRequest(body: unknown): InferCall {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object with "inputs"');
  }
  const parsed = parseOrDescribe(inferSchema, body);
  if (!parsed.ok) throw new BadRequest(parsed.message);
  const request = parsed.value as InferRequest;
  const cascade = parseOrDescribe(cascadeSchema, request.parameters?.cascade, "parameters.cascade");
  if (!cascade.ok) throw new BadRequest(cascade.message);
  return { request, cascade: cascade.value ?? "auto" };
}

/** Flatten row-major nested data (`[[1,2],[3,4]]` or `[1,2,3,4]`); nesting deeper than any tensor here is refused. */
function flatten(data: unknown[], depth: number): unknown[] {
  if (!data.some(Array.isArray)) return data;
  if (depth > 8) throw new BadRequest("input data is nested too deeply");
  const out: unknown[] = [];
  for (const item of data) {
    if (Array.isArray(item)) for (const x of flatten(item, depth + 1)) out.push(x);
    else out.push(item);
  }
  return out;
}

const shapeText = (shape: readonly number[]) => `[${shape.join(",")}]`;

/**
 * The input rows of a v2 infer call, checked against the model: input name, datatype, shape (against the
 * model and against the data's element count), values, batch limits; requested outputs must exist.
 */
export function readInferInputs(call: InferCall, signature: ModelSignature, limits: RequestLimits): InputRows {
  const { inputs, outputs } = call.request;
  const model = `model "${signature.name}"`;
  if (inputs.length !== 1)
    throw new BadRequest(`${model} takes 1 input ("${signature.inputName}"), got ${inputs.length}`);
  const tensor = inputs[0]!;
  if (tensor.name !== signature.inputName) {
    throw new BadRequest(`unknown input "${tensor.name}"; ${model} has input "${signature.inputName}"`);
  }
  if (!(DATATYPES as readonly string[]).includes(tensor.datatype)) {
    throw new BadRequest(`unsupported datatype "${tensor.datatype}"; the protocol's are ${DATATYPES.join(", ")}`);
  }
  if ((tensor.datatype as Datatype) !== "FP32") {
    throw new BadRequest(`input "${tensor.name}" has datatype ${tensor.datatype}; ${model} expects FP32`);
  }
  if (tensor.parameters?.binary_data_size !== undefined) {
    throw new BadRequest('binary tensor data is not supported; send the values in "data" as JSON');
  }
  const { shape } = tensor;
  if (shape.length !== 2 || shape[1] !== signature.width) {
    throw new BadRequest(
      `input "${tensor.name}" has shape ${shapeText(shape)}; ${model} expects [-1,${signature.width}]`,
    );
  }
  const batch = shape[0]!;
  if (batch < 1)
    throw new BadRequest(`input "${tensor.name}" has shape ${shapeText(shape)}; the batch must be at least 1`);
  checkBatch(batch, limits, signature.maxBatchSize);
  const flat = flatten(tensor.data, 0);
  if (flat.length !== batch * signature.width) {
    throw new BadRequest(
      `input "${tensor.name}" has ${flat.length} values; shape ${shapeText(shape)} needs ${batch * signature.width}`,
    );
  }
  for (const out of outputs ?? []) {
    if (out.name !== signature.outputName) {
      throw new BadRequest(`unknown output "${out.name}"; ${model} has output "${signature.outputName}"`);
    }
    if (out.parameters?.binary_data === true) {
      throw new BadRequest('binary output data is not supported; omit "binary_data"');
    }
  }
  const data = new Float32Array(flat.length);
  writeFloat32(flat, data, 0, (i) => `input "${tensor.name}" value ${i}`);
  return { data, batch, width: signature.width };
}
