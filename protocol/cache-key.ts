import { sha256Hex } from "./digest.ts";

const encoder = new TextEncoder();

/**
 * The response cache key: SHA-256 over model, version and the exact float32 bytes of the input rows.
 * Numbers are keyed by the float32 they become, so `1`, `1.0` and `1e0` (or nested vs flat data) give one
 * key, while a new model version never meets an old answer. Fields are length-prefixed so no two
 * (model, version) pairs can run into each other. Float32Array bytes are little-endian on every platform
 * Workers and Node run on.
 */
export async function cacheKey(model: string, version: string, rows: Float32Array): Promise<string> {
  const head = encoder.encode(`${model.length}:${model}|${version.length}:${version}|`);
  const buf = new Uint8Array(head.length + rows.byteLength);
  buf.set(head, 0);
  buf.set(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength), head.length);
  return sha256Hex(buf);
}
