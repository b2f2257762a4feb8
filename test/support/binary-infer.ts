import { request } from "undici";
import { float32FromBytes, INFERENCE_HEADER_LENGTH } from "../../protocol/binary-tensor.ts";
import type { JsonBody } from "./regional-server.ts";

/** A v2 infer body in the binary tensor data extension: the JSON part, then the rows as little-endian FP32. */
export function binaryInferBody(
  rows: readonly (readonly number[])[],
  extra: { id?: string; parameters?: Record<string, unknown>; outputs?: unknown[] } = {},
): { body: Uint8Array; headers: Record<string, string> } {
  const values = Float32Array.from(rows.flat());
  const json = new TextEncoder().encode(
    JSON.stringify({
      ...extra,
      inputs: [
        {
          name: "pixels",
          shape: [rows.length, rows[0]!.length],
          datatype: "FP32",
          parameters: { binary_data_size: values.byteLength },
        },
      ],
    }),
  );
  const body = new Uint8Array(json.length + values.byteLength);
  body.set(json);
  body.set(new Uint8Array(values.buffer), json.length);
  return {
    body,
    headers: { "content-type": "application/octet-stream", [INFERENCE_HEADER_LENGTH]: String(json.length) },
  };
}

/** An infer answer, JSON or binary: the JSON part and, for a binary answer, its values. */
export interface InferAnswer {
  status: number;
  headers: Record<string, string>;
  json: JsonBody;
  values?: number[];
}

/** POST a body and read the answer, splitting a binary answer at its Inference-Header-Content-Length. */
export async function postInfer(
  url: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
): Promise<InferAnswer> {
  const res = await request(url, { method: "POST", headers, body });
  const bytes = new Uint8Array(await res.body.arrayBuffer());
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = String(v);
  const length = flat[INFERENCE_HEADER_LENGTH];
  if (length === undefined)
    return { status: res.statusCode, headers: flat, json: JSON.parse(new TextDecoder().decode(bytes)) };
  const n = Number(length);
  return {
    status: res.statusCode,
    headers: flat,
    json: JSON.parse(new TextDecoder().decode(bytes.subarray(0, n))),
    values: Array.from(float32FromBytes(bytes.subarray(n))),
  };
}
