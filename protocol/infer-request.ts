import * as v from "valibot";
import { float32FromBytes } from "./binary-tensor.ts";
import { BadRequest } from "./errors.ts";
import { nearMissMessage } from "./field-suggestion.ts";
import type { RequestLimits } from "./limits.ts";
import type { ModelIo } from "./model-config.ts";
import { parseOrDescribe, plainObject } from "./schema-message.ts";
import { checkBatch, type InputRows, writeFloat32 } from "./tensor.ts";
import {
  CASCADE_MODES,
  type CascadeMode,
  DATATYPES,
  type Datatype,
  type InferInputTensor,
  type InferRequest,
} from "./types.ts";

const parametersSchema = plainObject(v.record(v.string(), v.unknown()));
const tensorSchema = v.strictObject({
  name: v.string(),
  shape: v.array(v.pipe(v.number(), v.integer("must hold integers"), v.minValue(0, "must not be negative"))),
  datatype: v.string(),
  parameters: v.optional(parametersSchema),
  data: v.optional(v.array(v.unknown())),
});
const inferSchema = v.strictObject({
  id: v.optional(v.string()),
  model_name: v.optional(v.string()),
  model_version: v.optional(v.string()),
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

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
/** A parameters object as `v.record` keeps it whole: valibot drops these keys from records. */
const plainRecord = (x: unknown): x is Record<string, unknown> =>
  isPlainObject(x) &&
  !Object.hasOwn(x, "__proto__") &&
  !Object.hasOwn(x, "prototype") &&
  !Object.hasOwn(x, "constructor");
const TENSOR_FIELDS = new Set(["name", "shape", "datatype", "parameters", "data"]);
/** The protocol's fields, and `model_name`/`model_version`, which KServe's clients add (checked: `checkNamedModel`). */
const REQUEST_FIELDS = new Set(["id", "model_name", "model_version", "parameters", "inputs", "outputs"]);

function plainTensor(t: unknown): boolean {
  if (!isPlainObject(t)) return false;
  for (const key in t) if (!TENSOR_FIELDS.has(key)) return false;
  const { name, shape, datatype, parameters, data } = t;
  if (typeof name !== "string" || typeof datatype !== "string" || !Array.isArray(shape)) return false;
  if (data !== undefined && !Array.isArray(data)) return false;
  for (const d of shape) if (!Number.isInteger(d) || (d as number) < 0) return false;
  return parameters === undefined || plainRecord(parameters);
}

function plainOutput(o: unknown): boolean {
  if (!isPlainObject(o)) return false;
  for (const key in o) if (key !== "name" && key !== "parameters") return false;
  return typeof o.name === "string" && (o.parameters === undefined || plainRecord(o.parameters));
}

/**
 * The same rules as `inferSchema` and the cascade parameter, checked by hand for a body that keeps them: the
 * call, or undefined for anything else (`schemaInferCall` then says what is wrong). Why: as for
 * `plainClassifyCall`; infer-request.test.ts holds the two to each other.
 */
export function plainInferCall(body: Record<string, unknown>): InferCall | undefined {
  for (const key in body) if (!REQUEST_FIELDS.has(key)) return undefined;
  const { id, model_name, model_version, parameters, inputs, outputs } = body;
  if (id !== undefined && typeof id !== "string") return undefined;
  if (model_name !== undefined && typeof model_name !== "string") return undefined;
  if (model_version !== undefined && typeof model_version !== "string") return undefined;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every(plainTensor)) return undefined;
  if (outputs !== undefined && !(Array.isArray(outputs) && outputs.every(plainOutput))) return undefined;
  let cascade: CascadeMode = "auto";
  if (parameters !== undefined) {
    if (!plainRecord(parameters)) return undefined;
    const mode = parameters.cascade;
    if (mode !== undefined) {
      if (!(CASCADE_MODES as readonly unknown[]).includes(mode)) return undefined;
      cascade = mode as CascadeMode;
    }
  }
  return { request: body as unknown as InferRequest, cascade };
}

/**
 * `inferSchema`'s verdict on an object body: the call, or a 400 naming the first field that is wrong (an unknown
 * one that looks like a slip, `input` or KServe v1's `instances`, first, with the field it meant).
 */
export function schemaInferCall(body: object): InferCall {
  const slip = nearMissMessage(body, REQUEST_FIELDS, { instances: "inputs", model: "model_name" });
  if (slip) throw new BadRequest(slip);
  const parsed = parseOrDescribe(inferSchema, body);
  if (!parsed.ok) throw new BadRequest(parsed.message);
  const request = parsed.value as InferRequest;
  const cascade = parseOrDescribe(cascadeSchema, request.parameters?.cascade, "parameters.cascade");
  if (!cascade.ok) throw new BadRequest(cascade.message);
  return { request, cascade: cascade.value ?? "auto" };
}

/** Check the fields of a v2 infer body (400 naming the field), before the model is looked up. */
export function parseInferRequest(body: unknown): InferCall {
  if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object with "inputs"');
  return plainInferCall(body) ?? schemaInferCall(body);
}

/**
 * A body's own `model_name` and `model_version` (KServe's InferenceRESTClient always sends `model_name`) against
 * the model and version of the path: KServe's server ignores them, Triton's too; here they may be left out or
 * repeat the path, and a body naming another model (or, with a version in the path, another version) is a
 * 400 rather than rows run on a model they were not meant for. Without a version in the path, `model_version`
 * is not compared: the version that answers is in the answer's `model_version`.
 */
export function checkNamedModel(call: InferCall, model: string, version?: string): void {
  const { model_name, model_version } = call.request;
  if (model_name !== undefined && model_name !== model) {
    throw new BadRequest(`the body's "model_name" is "${model_name}" but the path names model "${model}"`);
  }
  if (version !== undefined && model_version !== undefined && model_version !== version) {
    throw new BadRequest(`the body's "model_version" is "${model_version}" but the path names version "${version}"`);
  }
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

/** The values of an FP32 input sent as binary data (protocol/binary-tensor.ts): sizes must add up exactly. */
function binaryValues(
  name: string,
  tensor: InferInputTensor,
  binary: Uint8Array,
  shape: readonly number[],
  count: number,
) {
  const size = tensor.parameters!.binary_data_size;
  if (!Number.isSafeInteger(size) || (size as number) < 0) {
    throw new BadRequest(
      `input "${name}": "parameters.binary_data_size" must be a whole number of bytes, got ${JSON.stringify(size)}`,
    );
  }
  if (tensor.data !== undefined)
    throw new BadRequest(`input "${name}" has both "data" and "parameters.binary_data_size"`);
  if (size !== count * 4) {
    throw new BadRequest(
      `input "${name}" has binary_data_size ${size}; shape ${shapeText(shape)} of FP32 needs ${count * 4} bytes`,
    );
  }
  if (binary.length !== size) {
    throw new BadRequest(
      `the body has ${binary.length} bytes of binary tensor data after the JSON; binary_data_size says ${size}`,
    );
  }
  const values = float32FromBytes(binary);
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new BadRequest(`input "${name}" value ${i} is not a finite number`);
  }
  return values;
}

/**
 * The input rows of a v2 infer call, checked against the model: input name, datatype, shape (against the
 * model and against the data's element count), values, batch limits; requested outputs must exist. The
 * values come from `data`, or from `binary` (the bytes after the JSON part) when the input carries
 * `binary_data_size`. `allocate` gives the zero-filled array JSON values are written to.
 */
export function readInferInputs(
  call: InferCall,
  io: ModelIo,
  limits: RequestLimits,
  binary: Uint8Array = new Uint8Array(0),
  allocate: (length: number) => Float32Array = (length) => new Float32Array(length),
): InputRows {
  const { inputs, outputs } = call.request;
  const model = `model "${io.name}"`;
  if (inputs.length !== 1) throw new BadRequest(`${model} takes 1 input ("${io.inputName}"), got ${inputs.length}`);
  const tensor = inputs[0]!;
  if (tensor.name !== io.inputName) {
    throw new BadRequest(`unknown input "${tensor.name}"; ${model} has input "${io.inputName}"`);
  }
  if (!(DATATYPES as readonly string[]).includes(tensor.datatype)) {
    throw new BadRequest(`unsupported datatype "${tensor.datatype}"; the protocol's are ${DATATYPES.join(", ")}`);
  }
  if ((tensor.datatype as Datatype) !== "FP32") {
    throw new BadRequest(`input "${tensor.name}" has datatype ${tensor.datatype}; ${model} expects FP32`);
  }
  const { shape } = tensor;
  if (shape.length !== 2 || shape[1] !== io.width) {
    throw new BadRequest(`input "${tensor.name}" has shape ${shapeText(shape)}; ${model} expects [-1,${io.width}]`);
  }
  const batch = shape[0]!;
  if (batch < 1)
    throw new BadRequest(`input "${tensor.name}" has shape ${shapeText(shape)}; the batch must be at least 1`);
  checkBatch(batch, limits, io.maxBatchSize);
  for (const out of outputs ?? []) {
    if (out.name !== io.outputName) {
      throw new BadRequest(`unknown output "${out.name}"; ${model} has output "${io.outputName}"`);
    }
  }
  const count = batch * io.width;
  if (tensor.parameters?.binary_data_size !== undefined) {
    return { data: binaryValues(tensor.name, tensor, binary, shape, count), batch, width: io.width };
  }
  if (binary.length > 0) {
    throw new BadRequest(`${binary.length} bytes of binary data follow the JSON, but no input has binary_data_size`);
  }
  if (tensor.data === undefined) {
    throw new BadRequest(`input "${tensor.name}" has no "data" (nor "parameters.binary_data_size")`);
  }
  const flat = flatten(tensor.data, 0);
  if (flat.length !== count) {
    throw new BadRequest(`input "${tensor.name}" has ${flat.length} values; shape ${shapeText(shape)} needs ${count}`);
  }
  const data = allocate(flat.length);
  writeFloat32(flat, data, 0, (i) => `input "${tensor.name}" value ${i}`);
  return { data, batch, width: io.width };
}
