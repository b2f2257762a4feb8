import type { Deadline } from "@grpc/grpc-js";

/**
 * Milliseconds a gRPC call has left, from its deadline (grpc-js: a Date, a Unix time in ms, or Infinity for
 * none) at `nowMs`: what the HTTP routes read from the deadline header, for the same admission and batcher
 * expiry. Never negative; `Infinity` without a deadline.
 */
export function remainingMs(deadline: Deadline, nowMs: number): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return Number.POSITIVE_INFINITY;
  return Math.max(0, at - nowMs);
}
