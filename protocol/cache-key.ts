import { sha256Hex } from "./digest.ts";

const encoder = new TextEncoder();

/** The key of one answer in both cache tiers. */
export interface AnswerKey {
  /** The in-isolate tier's key: the same fields as `cacheKey`, as a string of the raw bytes (no digest). */
  local: string;
  /** The shared tier's key (`cacheKey`), computed on first use: only a local miss needs it. */
  shared(): Promise<string>;
}

/** Code units per `String.fromCharCode` call: far below any engine's argument limit. */
const CHUNK = 4096;

/**
 * The in-isolate cache key: model and version, length-prefixed as in `cacheKey`, then the rows' float32 bytes
 * read as UTF-16 code units (a float32 is two of them). Exact and collision-free, and several times cheaper
 * than a SHA-256 over the same bytes, which was a tenth of a cache hit's CPU in the Worker
 * (docs/performance.md). A Map key only: the string may hold lone surrogates, so it never leaves the isolate.
 */
export function localCacheKey(model: string, version: string, rows: Float32Array): string {
  const units = new Uint16Array(rows.buffer, rows.byteOffset, rows.length * 2);
  let key = `${model.length}:${model}|${version.length}:${version}|`;
  for (let i = 0; i < units.length; i += CHUNK) {
    key += String.fromCharCode.apply(null, units.subarray(i, i + CHUNK) as unknown as number[]);
  }
  return key;
}

/** Both tiers' keys of an answer; the SHA-256 of the shared tier is taken once, when first asked for. */
export function answerKey(model: string, version: string, rows: Float32Array): AnswerKey {
  let shared: Promise<string> | undefined;
  return {
    local: localCacheKey(model, version, rows),
    shared: () => {
      shared ??= cacheKey(model, version, rows);
      return shared;
    },
  };
}

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
