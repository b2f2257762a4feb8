/**
 * Which version answers an input during a canary, the same at the pools (which route it) and at the edge
 * (which caches the answer under that version): a stable hash of the input picks a bucket, and buckets below
 * the canary's percent go to the candidate. The same input always lands in the same bucket, so a repeat goes
 * to the same version; a bucket in the canary at 1% stays in it at 5%, 25% and 100%. The candidate's version
 * is part of what is hashed, so each rollout samples other inputs.
 */

const encoder = new TextEncoder();
/** Buckets per 100%: percents have two decimals. */
export const BUCKETS = 10_000;

/**
 * The bytes hashed (SHA-256, by each side's own crypto): model, candidate version and the request's float32
 * input bytes, length-prefixed as in the cache key.
 */
export function assignmentBytes(model: string, candidate: string, rows: Float32Array): Uint8Array {
  const head = encoder.encode(`canary|${model.length}:${model}|${candidate.length}:${candidate}|`);
  const out = new Uint8Array(head.length + rows.byteLength);
  out.set(head, 0);
  out.set(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength), head.length);
  return out;
}

/** The bucket, 0 to BUCKETS - 1, from the first four bytes of the digest. */
export function bucketOf(digest: Uint8Array): number {
  const n = ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
  return n % BUCKETS;
}

/** Whether a bucket is in a canary of `percent`. */
export function inCanary(bucket: number, percent: number): boolean {
  return bucket < Math.round(percent * (BUCKETS / 100));
}

/** The version an input of `bucket` maps to while `candidate` serves `percent` of requests beside `stable`. */
export function canaryVersion(bucket: number, rollout: { stable: string; candidate: string; percent: number }): string {
  return inCanary(bucket, rollout.percent) ? rollout.candidate : rollout.stable;
}
