import { TIMING_SEPARATOR, timingEntry } from "../protocol/server-timing.ts";

/** What an answer's Server-Timing says of the pool: queue, compute (with its batch) and total, in ms. */
export interface RegionalTimings {
  queueMs: number;
  computeMs: number;
  batchRows: number;
  totalMs: number;
}

/**
 * The pool's Server-Timing value (protocol/server-timing.ts's format), after `prefix` (the simulated
 * distance's entry and separator, or ""):
 * `queue;dur=0.120, compute;dur=0.045;desc="batch of 40", total;dur=0.310;desc="regional"`.
 */
export function regionalServerTiming(prefix: string, t: RegionalTimings): string {
  return (
    prefix +
    timingEntry("queue", t.queueMs) +
    TIMING_SEPARATOR +
    timingEntry("compute", t.computeMs, `batch of ${t.batchRows}`) +
    TIMING_SEPARATOR +
    timingEntry("total", t.totalMs, "regional")
  );
}

/** The simulated distance's entry (`--delay-ms`) and its separator, written once per pool; "" without one. */
export function simulatedDelayTiming(delayMs: number): string {
  return delayMs > 0 ? timingEntry("delay", delayMs, "simulated distance") + TIMING_SEPARATOR : "";
}
