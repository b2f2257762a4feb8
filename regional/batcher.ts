import { DeadlineExceeded } from "../protocol/errors.ts";
import type { InputRows } from "../protocol/tensor.ts";
import { type BatcherState, nextBatch } from "./batch-policy.ts";
import { nowUs } from "./clock.ts";
import type { Executed, Executor, ExecutorContext } from "./executor.ts";

interface Waiting {
  input: InputRows;
  /** Rows in `input`, as the policy reads them. */
  rows: number;
  enqueuedUs: number;
  deadlineUs: number;
  resolve: (result: Executed) => void;
  reject: (err: unknown) => void;
}

/**
 * Triton-style dynamic batcher for one model version: concurrent requests are merged into one `session.run`
 * (`nextBatch` decides which), one run at a time, and each caller gets exactly its own output rows back.
 *
 * The first look at a new queue is deferred with `setImmediate`, which runs after the event loop's poll
 * phase: every request parsed from the sockets in that phase joins the batch without any timer wait.
 * onnxruntime-node runs its kernels synchronously, so requests that arrive during a run wait in the sockets
 * and join the next batch the same way.
 */
export class DynamicBatcher implements Executor {
  readonly #context: ExecutorContext;
  #queue: Waiting[] = [];
  #state: BatcherState = "idle";
  #running = false;
  /** Requests of the run in progress (0 between runs). */
  #inRun = 0;
  #scheduled = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(context: ExecutorContext) {
    this.#context = context;
  }

  get pending(): number {
    return this.#queue.length + this.#inRun;
  }

  submit(rows: InputRows, deadlineUs: number): Promise<Executed> {
    const enqueuedUs = nowUs();
    if (deadlineUs <= enqueuedUs) return Promise.reject(new DeadlineExceeded());
    if (this.#queue.length >= this.#context.maxQueue) return Promise.reject(this.#context.queueFull());
    return new Promise<Executed>((resolve, reject) => {
      this.#queue.push({ input: rows, rows: rows.batch, enqueuedUs, deadlineUs, resolve, reject });
      this.#context.recorder.queueDepth(this.#queue.length);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#running || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#dispatch();
    });
  }

  #dispatch(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running) return;
    const now = nowUs();
    const plan = nextBatch(this.#queue, this.#context, now, this.#state);
    if (plan.expire.length === 0 && plan.run.length === 0) {
      if (plan.wakeAtUs !== undefined) {
        this.#timer = setTimeout(() => this.#dispatch(), (plan.wakeAtUs - now) / 1000);
      } else if (this.#queue.length === 0) {
        this.#state = "idle";
      }
      return;
    }
    const expired = plan.expire.map((i) => this.#queue[i]!);
    const batch = plan.run.map((i) => this.#queue[i]!);
    if (expired.length + batch.length === this.#queue.length) {
      // Under load nearly every look takes the whole queue: no set of the taken and no filtering then.
      this.#queue = [];
    } else {
      const taken = new Set([...expired, ...batch]);
      this.#queue = this.#queue.filter((w) => !taken.has(w));
    }
    this.#context.recorder.queueDepth(this.#queue.length);
    for (const w of expired) w.reject(new DeadlineExceeded("deadline passed while queued; the request was not run"));
    if (batch.length > 0) void this.#run(batch, now);
    else this.#dispatch();
  }

  async #run(batch: Waiting[], startUs: number): Promise<void> {
    this.#running = true;
    this.#inRun = batch.length;
    const { recorder } = this.#context;
    for (const w of batch) recorder.queued((startUs - w.enqueuedUs) / 1e6);
    const width = batch[0]!.input.width;
    let total = 0;
    for (const w of batch) total += w.rows;
    let data = batch[0]!.input.data;
    if (batch.length > 1) {
      data = new Float32Array(total * width);
      let offset = 0;
      for (const w of batch) {
        data.set(w.input.data, offset);
        offset += w.input.data.length;
      }
    }
    try {
      const probs = await this.#context.run(data, total);
      const computeUs = nowUs() - startUs;
      recorder.executed(total, computeUs / 1e6, batch.length);
      const classes = probs.length / total;
      let row = 0;
      for (const w of batch) {
        w.resolve({
          probs: probs.subarray(row * classes, (row + w.rows) * classes),
          queueMs: (startUs - w.enqueuedUs) / 1000,
          computeMs: computeUs / 1000,
          batchRows: total,
        });
        row += w.rows;
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.#running = false;
      this.#inRun = 0;
      this.#state = "busy";
      if (this.#queue.length > 0) this.#schedule();
      else this.#state = "idle";
    }
  }
}
