import { BadRequest } from "../../protocol/errors.ts";
import { type InferCall, parseInferRequest } from "../../protocol/infer-request.ts";
import type { GrpcInferParameter, GrpcModelInferRequest, GrpcTensorContents } from "./messages.ts";

/** A gRPC `ModelInferRequest` in the form the HTTP routes validate: the v2 call, its raw bytes, the model. */
export interface GrpcInferCall {
  model: string;
  /** Undefined: the version being served (proto3 sends "" for "not given"). */
  version: string | undefined;
  call: InferCall;
  /** Every input's `raw_input_contents`, one after the other, as the binary tensor extension lays them out. */
  binary: Uint8Array;
}

/** Which `InferTensorContents` field carries each datatype's values. */
const CONTENTS_FIELD: Readonly<Record<string, keyof GrpcTensorContents>> = {
  BOOL: "bool_contents",
  INT8: "int_contents",
  INT16: "int_contents",
  INT32: "int_contents",
  INT64: "int64_contents",
  UINT8: "uint_contents",
  UINT16: "uint_contents",
  UINT32: "uint_contents",
  UINT64: "uint64_contents",
  FP32: "fp32_contents",
  FP64: "fp64_contents",
  BYTES: "bytes_contents",
};

const EMPTY = new Uint8Array(0);

function parameters(map: Record<string, GrpcInferParameter> | undefined): Record<string, unknown> | undefined {
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return undefined;
  return Object.fromEntries(entries.map(([key, p]) => [key, p.parameter_choice ? p[p.parameter_choice] : undefined]));
}

/** Every field of `InferTensorContents`. */
const CONTENTS_FIELDS = [...new Set(Object.values(CONTENTS_FIELD))];

/** The filled fields of a tensor's contents. */
function filledContents(contents: GrpcTensorContents | null | undefined): (keyof GrpcTensorContents)[] {
  if (!contents) return [];
  return CONTENTS_FIELDS.filter((field) => (contents[field]?.length ?? 0) > 0);
}

const product = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/**
 * Convert a `ModelInferRequest` to the v2 REST call and check it with the HTTP routes' own
 * `parseInferRequest` (protocol/infer-request.ts); `readInferInputs` then checks it against the model, as for
 * HTTP. Values come from `raw_input_contents` (one entry per input, in order; what tritonclient sends by
 * default), which become binary tensor data, or from the `contents` field of the input's datatype, which
 * becomes `data`. 400 (INVALID_ARGUMENT) naming the field for what only gRPC can get wrong.
 */
export function grpcInferCall(request: GrpcModelInferRequest): GrpcInferCall {
  if (request.model_name === "") throw new BadRequest('"model_name" is required');
  const raw = request.raw_input_contents;
  if (raw.length > 0 && raw.length !== request.inputs.length) {
    throw new BadRequest(
      `"raw_input_contents" has ${raw.length} entries; it needs one per input, in order (${request.inputs.length})`,
    );
  }
  const inputs = request.inputs.map((tensor, i) => {
    const where = `input "${tensor.name}"`;
    const filled = filledContents(tensor.contents);
    const out: Record<string, unknown> = { name: tensor.name, shape: tensor.shape, datatype: tensor.datatype };
    const own = parameters(tensor.parameters);
    if (raw.length > 0) {
      if (filled.length > 0) {
        throw new BadRequest(`${where} has "contents.${filled[0]}" and "raw_input_contents": send one of them`);
      }
      const bytes = raw[i]!;
      // Said in gRPC's words here; the shared check would speak of the REST extension's binary_data_size.
      if (tensor.datatype === "FP32" && tensor.shape.every((d) => Number.isInteger(d) && d >= 0)) {
        const needed = product(tensor.shape) * 4;
        if (bytes.length !== needed) {
          throw new BadRequest(
            `"raw_input_contents[${i}]" has ${bytes.length} bytes; ${where} of shape [${tensor.shape.join(",")}] FP32 needs ${needed}`,
          );
        }
      }
      out.parameters = { ...own, binary_data_size: bytes.length };
      return out;
    }
    if (own?.binary_data_size !== undefined) {
      throw new BadRequest(
        `${where} has "parameters.binary_data_size", HTTP's binary tensor extension; over gRPC send the bytes in "raw_input_contents"`,
      );
    }
    if (own) out.parameters = own;
    const field = CONTENTS_FIELD[tensor.datatype];
    if (field && filled.includes(field)) out.data = tensor.contents![field];
    else if (filled.length > 0) {
      throw new BadRequest(
        `${where} is ${tensor.datatype} but its values are in "contents.${filled[0]}"${field ? `; ${tensor.datatype} goes in "contents.${field}"` : ""}`,
      );
    }
    return out;
  });
  const body: Record<string, unknown> = { inputs };
  if (request.id !== "") body.id = request.id;
  const requestParameters = parameters(request.parameters);
  if (requestParameters) body.parameters = requestParameters;
  if (request.outputs.length > 0) {
    body.outputs = request.outputs.map((o) => {
      const own = parameters(o.parameters);
      return own ? { name: o.name, parameters: own } : { name: o.name };
    });
  }
  return {
    model: request.model_name,
    version: request.model_version === "" ? undefined : request.model_version,
    call: parseInferRequest(body),
    binary: raw.length === 0 ? EMPTY : raw.length === 1 ? raw[0]! : Buffer.concat(raw),
  };
}
