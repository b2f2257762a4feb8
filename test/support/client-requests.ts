/**
 * The exact requests real inference clients send, rebuilt byte for byte from their sources (neither tritonclient
 * nor kserve installs here: docs/toolchain.md). Read from:
 * - tritonclient 2.x `http/_client.py` (geventhttpclient) and `http/aio/__init__.py` (aiohttp with
 *   `auto_decompress=False`), `http/_utils.py` `_get_inference_request`, `_infer_input.py`,
 *   `_requested_output.py`: rapidjson's compact JSON; no Content-Type from geventhttpclient, aiohttp's
 *   `application/octet-stream` for bytes and its default `Accept-Encoding: gzip, deflate`; `gzip.compress` or
 *   `zlib.compress` of the whole body with `Content-Encoding` when `request_compression_algorithm` is set, the
 *   Inference-Header-Content-Length still the uncompressed JSON's.
 * - kserve `inference_client.py` `InferenceRESTClient.infer` and `protocol/infer_type.py` `InferRequest.to_rest`:
 *   orjson's compact JSON with a uuid `id` and `model_name`, `application/json`, httpx's default headers.
 */
import { deflateSync, gzipSync } from "node:zlib";

export interface ClientRequest {
  /** Which client, mode and compression. */
  name: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A number as Python's json modules write a float (`3.0`, `1e-05`), which JavaScript writes `3`, `1e-5`. */
function pythonFloat(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${x}.0`;
  return String(x).replace(/e([+-])(\d)$/, "e$10$2");
}

/** A value Python holds as a float (numpy FP32 data after `.item()`): written with a decimal point. */
class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}
/** JSON as Python writes it compactly (rapidjson, orjson): no spaces, floats as floats. */
function python(value: unknown): string {
  if (value instanceof PyFloat) return pythonFloat(value.value);
  if (Array.isArray(value)) return `[${value.map(python).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${python(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

const encode = (s: string) => new TextEncoder().encode(s);
const concat = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

export type Compression = "gzip" | "deflate" | undefined;

function compressed(
  name: string,
  headers: Record<string, string>,
  body: Uint8Array,
  compression: Compression,
): ClientRequest {
  if (compression === undefined) return { name, headers, body };
  const bytes = compression === "gzip" ? gzipSync(body) : deflateSync(body);
  return {
    name: `${name}, ${compression} body`,
    headers: { ...headers, "Content-Encoding": compression },
    body: bytes,
  };
}

export interface Tensor {
  input: string;
  output: string;
  rows: readonly (readonly number[])[];
}

/** geventhttpclient's own header (tritonclient's HTTP client adds Content-Length and the rest). */
const GEVENT = { "User-Agent": "python/gevent-http-client-2.3.1" };
/** What aiohttp adds to every request of tritonclient's asyncio client. */
const AIOHTTP = { Accept: "*/*", "Accept-Encoding": "gzip, deflate", "User-Agent": "Python/3.12 aiohttp/3.10.10" };
/** httpx's defaults (KServe's InferenceRESTClient). */
const HTTPX = { accept: "*/*", "accept-encoding": "gzip, deflate", "user-agent": "python-httpx/0.27.2" };

/**
 * tritonclient `infer()` in JSON mode: `set_data_from_numpy(x, binary_data=False)` and
 * `InferRequestedOutput(name, binary_data=False)`. The body is JSON only, so no Inference-Header-Content-Length
 * and, from geventhttpclient, no Content-Type; the asyncio client's aiohttp calls it application/octet-stream.
 */
export function tritonJson(t: Tensor, client: "http" | "aio", compression?: Compression): ClientRequest {
  const json = python({
    inputs: [
      {
        name: t.input,
        shape: [t.rows.length, t.rows[0]!.length],
        datatype: "FP32",
        data: t.rows.flat().map((x) => new PyFloat(Math.fround(x))),
      },
    ],
    outputs: [{ name: t.output, parameters: { binary_data: false } }],
  });
  const headers = client === "http" ? { ...GEVENT } : { ...AIOHTTP, "Content-Type": "application/octet-stream" };
  return compressed(`tritonclient ${client} JSON`, headers, encode(json), compression);
}

/**
 * tritonclient `infer()` with its defaults: the input as binary data (`binary_data=True`), no outputs named, so
 * `binary_data_output: true`; Inference-Header-Content-Length is the JSON part's length before compression.
 */
export function tritonBinary(t: Tensor, client: "http" | "aio", compression?: Compression): ClientRequest {
  const values = Float32Array.from(t.rows.flat());
  const json = python({
    inputs: [
      {
        name: t.input,
        shape: [t.rows.length, t.rows[0]!.length],
        datatype: "FP32",
        parameters: { binary_data_size: values.byteLength },
      },
    ],
    parameters: { binary_data_output: true },
  });
  const head = encode(json);
  const base = client === "http" ? { ...GEVENT } : { ...AIOHTTP, "Content-Type": "application/octet-stream" };
  const headers = { ...base, "Inference-Header-Content-Length": String(head.length) };
  return compressed(`tritonclient ${client} binary`, headers, concat(head, new Uint8Array(values.buffer)), compression);
}

/** kserve `InferenceRESTClient.infer(base_url, InferRequest(model_name, infer_inputs=[...]))` with numpy data. */
export function kserveRest(t: Tensor, model: string): ClientRequest {
  const json = python({
    id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
    model_name: model,
    inputs: [
      {
        name: t.input,
        shape: [t.rows.length, t.rows[0]!.length],
        datatype: "FP32",
        data: t.rows.flat().map((x) => new PyFloat(Math.fround(x))),
      },
    ],
  });
  return {
    name: "kserve InferenceRESTClient",
    headers: { ...HTTPX, "content-type": "application/json" },
    body: encode(json),
  };
}

/**
 * kserve's `InferInput.set_data_from_numpy(x)` (binary by default): `to_rest` puts the bytes after orjson's JSON,
 * and the client adds Inference-Header-Content-Length and `application/octet-stream`.
 */
export function kserveBinary(t: Tensor, model: string): ClientRequest {
  const values = Float32Array.from(t.rows.flat());
  const head = encode(
    python({
      id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
      model_name: model,
      inputs: [
        {
          name: t.input,
          shape: [t.rows.length, t.rows[0]!.length],
          datatype: "FP32",
          parameters: { binary_data_size: values.byteLength },
        },
      ],
    }),
  );
  return {
    name: "kserve InferenceRESTClient binary",
    headers: {
      ...HTTPX,
      "inference-header-content-length": String(head.length),
      "content-type": "application/octet-stream",
    },
    body: concat(head, new Uint8Array(values.buffer)),
  };
}

/** Every client's infer request for `t` (model `model`), each compression the tritonclient ones offer. */
export function everyClientRequest(t: Tensor, model: string): ClientRequest[] {
  const out: ClientRequest[] = [];
  for (const compression of [undefined, "gzip", "deflate"] as const) {
    for (const client of ["http", "aio"] as const) {
      out.push(tritonJson(t, client, compression), tritonBinary(t, client, compression));
    }
  }
  out.push(kserveRest(t, model), kserveBinary(t, model));
  return out;
}

/** The answer every request above is compared with: the plain JSON request with Content-Type application/json. */
export function plainJson(t: Tensor): ClientRequest {
  const body = JSON.stringify({
    inputs: [{ name: t.input, shape: [t.rows.length, t.rows[0]!.length], datatype: "FP32", data: t.rows.flat() }],
  });
  return { name: "plain JSON", headers: { "content-type": "application/json" }, body: encode(body) };
}
