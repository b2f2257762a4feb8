/**
 * The Open Inference Protocol's binary tensor data extension, as Triton defines it
 * (triton-inference-server/server, docs/protocol/extension_binary_data.md): the JSON request or response is
 * followed in the same body by raw tensor bytes, little-endian, row-major, in the order of the tensors in
 * the JSON; `Inference-Header-Content-Length` is the length of the JSON part; each such tensor carries
 * `parameters.binary_data_size`. An output comes back binary when its `parameters.binary_data` is true, or
 * when the request's `parameters.binary_data_output` is true and the output does not say otherwise.
 * Web-standard APIs only: the edge Worker and the regional pools share it.
 */
import { BadRequest, UnsupportedMediaType } from "./errors.ts";
import { isJsonContentType, parseJsonText, utf8Text } from "./json-body.ts";
import type { InferRequest, InferResponse } from "./types.ts";

/** Length in bytes of the JSON part of a body that carries binary tensor data. */
export const INFERENCE_HEADER_LENGTH = "inference-header-content-length";
/** The content type of a body with binary tensor data (Triton's; requests may carry any). */
export const BINARY_CONTENT_TYPE = "application/octet-stream";

/** A v2 infer body: its parsed JSON part and the binary tensor bytes after it (empty for a plain JSON body). */
export interface InferBody {
  json: unknown;
  binary: Uint8Array;
}

const EMPTY = new Uint8Array(0);

/**
 * Whether a v2 body without `Inference-Header-Content-Length` is read as JSON: a JSON type, no Content-Type
 * (tritonclient's HTTP client in JSON mode sends none), or `application/octet-stream` (its asyncio client's,
 * which aiohttp sets for bytes). Triton reads such a body as JSON whatever its type; a form, text or
 * multipart type (what a browser may send across origins without a preflight) is still a 415.
 */
export function readsAsJson(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === "") return true;
  const essence = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return essence === BINARY_CONTENT_TYPE || isJsonContentType(contentType);
}

/**
 * Split a v2 infer body. Without `Inference-Header-Content-Length` it is JSON (`readsAsJson` for its type,
 * 415 otherwise). With it, the content type is not looked at (Triton ignores it, and clients send anything
 * from none to `application/octet-stream`); the header must be a whole number of bytes within the body (400).
 */
export function readInferBody(
  body: Uint8Array,
  headerLength: string | undefined,
  contentType: string | undefined,
): InferBody {
  if (headerLength === undefined) {
    if (!readsAsJson(contentType)) {
      throw new UnsupportedMediaType(contentType, "application/json or application/octet-stream (read as JSON)");
    }
    return { json: parseJsonText(utf8Text(body)), binary: EMPTY };
  }
  const length = /^\d{1,12}$/.test(headerLength.trim()) ? Number(headerLength) : Number.NaN;
  if (!(length <= body.length)) {
    throw new BadRequest(
      `${INFERENCE_HEADER_LENGTH} must be the length in bytes of the JSON part of the body (at most ${body.length}), got "${headerLength}"`,
    );
  }
  return { json: parseJsonText(utf8Text(body.subarray(0, length))), binary: body.subarray(length) };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** `bytes` (little-endian FP32, as the extension sends them) as float32 values, copied into aligned memory. */
export function float32FromBytes(bytes: Uint8Array): Float32Array {
  const out = new Float32Array(bytes.length / 4);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  }
  return out;
}

/** Float32 values as little-endian bytes (no copy on a little-endian host). */
export function bytesOfFloat32(values: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
  return out;
}

/** A binary parameter as the extension defines it: absent or a boolean (400 naming it otherwise). */
function flag(parameters: Record<string, unknown> | undefined, name: string, where: string): boolean | undefined {
  const value = parameters?.[name];
  if (value !== undefined && typeof value !== "boolean") {
    throw new BadRequest(`"${where}${name}" must be true or false, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Whether output `name` goes back as binary data: its own `binary_data`, else the request's
 * `binary_data_output`, else JSON.
 */
export function wantsBinaryOutput(request: InferRequest, name: string): boolean {
  const all = flag(request.parameters, "binary_data_output", "parameters.");
  const index = request.outputs?.findIndex((o) => o.name === name) ?? -1;
  const own =
    index < 0 ? undefined : flag(request.outputs![index]!.parameters, "binary_data", `outputs.${index}.parameters.`);
  return own ?? all ?? false;
}

/** A finished answer body with its content headers. */
export interface EncodedAnswer {
  headers: Record<string, string>;
  body: string | Uint8Array<ArrayBuffer>;
}

/**
 * The body of a v2 infer response: JSON, or (`binary`) the JSON part followed by `values` as little-endian
 * FP32, with `Inference-Header-Content-Length`. A binary response's outputs carry `binary_data_size`
 * instead of `data` (`toInferResponse` with `binary`).
 */
export function encodeInferResponse(response: InferResponse, values: Float32Array, binary: boolean): EncodedAnswer {
  if (!binary) return { headers: { "content-type": "application/json" }, body: JSON.stringify(response) };
  const bytes = bytesOfFloat32(values);
  const json = new TextEncoder().encode(JSON.stringify(response));
  const body = new Uint8Array(json.length + bytes.length);
  body.set(json, 0);
  body.set(bytes, json.length);
  return {
    headers: { "content-type": BINARY_CONTENT_TYPE, [INFERENCE_HEADER_LENGTH]: String(json.length) },
    body,
  };
}
