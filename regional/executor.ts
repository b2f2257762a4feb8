import type { ServingError } from "../protocol/errors.ts";
import type { InputRows } from "../protocol/tensor.ts";
import type { ModelRecorder } from "./recorder.ts";
import type { RunRows } from "./session.ts";

// Executors' deadlines are on this clock; exported with the contract for executors outside regional/
// (scripts/benchmarks/regional-baselines.ts).

/** One request's answer: its own output rows and where its time went. */
export interface Executed {
  probs: Float32Array;
  /** Milliseconds between joining the queue and its run starting. */
  queueMs: number;
  /** Milliseconds of the run it was part of. */
  computeMs: number;
  /** Rows in that run, its own included. */
  batchRows: number;
  /** Requests in that run, its own included. */
  batchRequests: number;
  /** When the batch was formed and when its `session.run` began and ended, on the `nowUs` clock (its spans). */
  batchStartUs: number;
  runStartUs: number;
  runEndUs: number;
}

/** How requests reach a model version's session. The pool uses the dynamic batcher; benchmarks swap it. */
export interface Executor {
  /**
   * Run `rows` unless `deadlineUs` (on the `nowUs` clock; `Infinity` for none) passes first. `flow` is the
   * request's tenant (regional/tenants/), which the dynamic batcher serves fairly; other executors may ignore it.
   */
  submit(rows: InputRows, deadlineUs: number, flow: number): Promise<Executed>;
  /** Requests submitted and not yet answered: queued or in the run now (a shadow run waits while any are). */
  readonly pending: number;
}

/** What an executor is built from, per model version. */
export interface ExecutorContext {
  run: RunRows;
  /** Most rows per run: the pool's `--max-batch` capped by the model's `maxBatchSize`. */
  maxBatch: number;
  /** Requests that may wait; the next one is refused with `queueFull()`. */
  maxQueue: number;
  maxQueueDelayUs: number;
  queueFull: () => ServingError;
  recorder: ModelRecorder;
}

export type ExecutorFactory = (context: ExecutorContext) => Executor;
