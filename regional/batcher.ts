import { DeadlineExceeded } from "../protocol/errors.ts";
import type { InputRows } from "../protocol/tensor.ts";
import { type BatcherState, nextBatch } from "./batch-policy.ts";
import { nowUs } from "./clock.ts";
import type { Executed, Executor, ExecutorContext } from "./executor.ts";
import { fairTags, virtualTimeAfter } from "./tenants/fair-order.ts";
import type { TenantScheduler } from "./tenants/tenant-scheduler.ts";
import { DIRECT_FLOW } from "./tenants/tenant-table.ts";

interface Waiting {
  input: InputRows;
  /** Rows in `input`, as the policy reads them. */
  rows: number;
  enqueuedUs: number;
  deadlineUs: number;
  /** The request's tenant flow. */
  flow: number;
  /** Within its tenant's reservation (runs first). */
  reserved: boolean;
  /** Best-effort: its start tag in the tenants' fair order (tenants/fair-order.ts). */
  startTag: number | undefined;
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
 *
 * With the pool's tenants, each call takes its rows from its tenant's reservation when it can (then it runs
 * first, and a full queue does not refuse it while reserved calls alone do not fill it); the others are tagged
 * for weighted fair queueing over rows, which decides the order whenever more rows wait than one run takes.
 */
export class DynamicBatcher implements Executor {
  readonly #context: ExecutorContext;
  readonly #tenants: TenantScheduler | undefined;
  #queue: Waiting[] = [];
  /** Fair queueing: the virtual time, and each flow's latest finish tag. */
  #virtualTime = 0;
  readonly #lastFinish: number[];
  /** Reserved calls in the queue. */
  #reservedQueued = 0;
  #state: BatcherState = "idle";
  #running = false;
  /** Requests of the run in progress (0 between runs). */
  #inRun = 0;
  #scheduled = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(context: ExecutorContext, tenants?: TenantScheduler) {
    this.#context = context;
    this.#tenants = tenants;
    this.#lastFinish = tenants ? tenants.table.flows.map(() => 0) : [];
  }

  get pending(): number {
    return this.#queue.length + this.#inRun;
  }

  submit(rows: InputRows, deadlineUs: number, flow = DIRECT_FLOW): Promise<Executed> {
    const enqueuedUs = nowUs();
    if (deadlineUs <= enqueuedUs) return Promise.reject(new DeadlineExceeded());
    const tenants = this.#tenants;
    const reserved = tenants?.reserve(flow, rows.batch, enqueuedUs) === true;
    const { maxQueue } = this.#context;
    if (reserved ? this.#reservedQueued >= maxQueue : this.#queue.length >= maxQueue) {
      return Promise.reject(this.#context.queueFull());
    }
    let startTag: number | undefined;
    if (tenants !== undefined && !reserved) {
      const tags = fairTags(this.#virtualTime, this.#lastFinish[flow]!, rows.batch, tenants.weight(flow));
      this.#lastFinish[flow] = tags.finish;
      startTag = tags.start;
    }
    if (reserved) this.#reservedQueued++;
    return new Promise<Executed>((resolve, reject) => {
      this.#queue.push({
        input: rows,
        rows: rows.batch,
        enqueuedUs,
        deadlineUs,
        flow,
        reserved,
        startTag,
        resolve,
        reject,
      });
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
    if (this.#tenants) {
      this.#virtualTime = virtualTimeAfter(this.#virtualTime, this.#queue, plan.run);
      for (const w of expired) if (w.reserved) this.#reservedQueued--;
      for (const w of batch) if (w.reserved) this.#reservedQueued--;
    }
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
      const runStartUs = nowUs();
      const probs = await this.#context.run(data, total);
      const runEndUs = nowUs();
      const computeUs = runEndUs - startUs;
      recorder.executed(total, computeUs / 1e6, batch.length);
      const tenants = this.#tenants;
      if (tenants) for (const w of batch) tenants.recorder(w.flow).rows(w.rows, w.reserved);
      const classes = probs.length / total;
      let row = 0;
      for (const w of batch) {
        w.resolve({
          probs: probs.subarray(row * classes, (row + w.rows) * classes),
          queueMs: (startUs - w.enqueuedUs) / 1000,
          computeMs: computeUs / 1000,
          batchRows: total,
          batchRequests: batch.length,
          batchStartUs: startUs,
          runStartUs,
          runEndUs,
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
