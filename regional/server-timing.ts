/**
 * A duration in ms written with three decimals, as `ms.toFixed(3)` writes it for the durations of an answer
 * (finite, non-negative, under 2^31 µs), rounded to the µs. Built from two integers: V8 formats an integer
 * several times faster than `toFixed` formats a double, and the pool writes three of these per answer.
 */
export function threeDecimals(ms: number): string {
  const us = Math.round(ms * 1000);
  const whole = Math.floor(us / 1000);
  const fraction = us - whole * 1000;
  return `${whole}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`;
}

/** What an answer's Server-Timing says of the pool: queue, compute (with its batch) and total, in ms. */
export interface RegionalTimings {
  queueMs: number;
  computeMs: number;
  batchRows: number;
  totalMs: number;
}

/**
 * The pool's Server-Timing value, after `prefix` (the simulated distance's entry, or ""):
 * `queue;dur=0.120, compute;dur=0.045;desc="batch of 40", total;dur=0.310;desc="regional"`.
 */
export function regionalServerTiming(prefix: string, t: RegionalTimings): string {
  return (
    `${prefix}queue;dur=${threeDecimals(t.queueMs)}, ` +
    `compute;dur=${threeDecimals(t.computeMs)};desc="batch of ${t.batchRows}", ` +
    `total;dur=${threeDecimals(t.totalMs)};desc="regional"`
  );
}
