import { BadRequest, PayloadTooLarge } from "./errors.ts";
import type { RequestLimits } from "./limits.ts";

/** Rows of float32 features, row-major: `data.length === batch * width`. */
export interface InputRows {
  data: Float32Array;
  batch: number;
  width: number;
}

/** A value's type as a JSON client would name it. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/**
 * Write JSON numbers into `out` from `offset`, rejecting what float32 cannot hold exactly enough to mean
 * what the client sent: non-numbers, non-finite values (JSON's 1e999 parses to Infinity) and values whose
 * float32 rounding overflows.
 */
export function writeFloat32(
  values: readonly unknown[],
  out: Float32Array,
  offset: number,
  where: (i: number) => string,
): void {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number") throw new BadRequest(`${where(i)} must be a number, got ${jsonType(value)}`);
    if (!Number.isFinite(value)) throw new BadRequest(`${where(i)} is not a finite number`);
    const f = Math.fround(value);
    if (!Number.isFinite(f)) throw new BadRequest(`${where(i)} (${value}) overflows float32`);
    out[offset + i] = f;
  }
}

/** The most rows a request may carry: the smaller of the server's limit and the model's. */
export function checkBatch(batch: number, limits: RequestLimits, modelMaxBatch: number): void {
  const max = Math.min(limits.maxBatch, modelMaxBatch);
  if (batch > max) throw new PayloadTooLarge(`batch of ${batch} rows exceeds the limit of ${max}`);
}
