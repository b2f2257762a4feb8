import type { Executed } from "../executor.ts";

/** How a traced request ended, as its transport saw it. */
export type RequestEnd =
  | { protocol: "http"; method: string; route: string; status: number; error?: { code: string; message: string } }
  | { protocol: "grpc"; method: string; code: string; error?: { code: string; message: string } };

/**
 * A traced request as plain data, the spans' whole input: it crosses to the span thread (regional/tracing/
 * span-thread.ts) by structured clone, so it holds strings and numbers only, its times in microseconds since the
 * epoch (the thread's monotonic clock starts elsewhere).
 */
export interface TraceRecord {
  /** The caller's context as it came (already checked to be sampled, or not parent-based); none for a root. */
  traceparent: string | undefined;
  tracestate: string | undefined;
  receivedUs: number;
  endedUs: number;
  model: string | undefined;
  version: string | undefined;
  requestId: string | undefined;
  rows: number | undefined;
  audit: boolean;
  /** Its run in the batcher, when it reached one: queue wait, the batch, its inference. */
  run:
    | { queuedUs: number; batchStartUs: number; runStartUs: number; runEndUs: number; rows: number; requests: number }
    | undefined;
  end: RequestEnd;
}

/** Where the `nowUs` clock starts, in microseconds since the epoch. */
const ORIGIN_US = performance.timeOrigin * 1000;

/** A `nowUs` time as microseconds since the epoch. */
export const epochUs = (us: number): number => ORIGIN_US + us;

/** The run's times, from the batcher's `nowUs` readings. */
export function runRecord(run: Executed): NonNullable<TraceRecord["run"]> {
  return {
    queuedUs: epochUs(run.batchStartUs - run.queueMs * 1000),
    batchStartUs: epochUs(run.batchStartUs),
    runStartUs: epochUs(run.runStartUs),
    runEndUs: epochUs(run.runEndUs),
    rows: run.batchRows,
    requests: run.batchRequests,
  };
}
