import { once } from "node:events";
import { Worker } from "node:worker_threads";

/**
 * Timers that fire at a `performance.now()` time to within a fraction of a millisecond, without spinning: one
 * helper thread per thread that uses them sleeps in `Atomics.wait` until the earliest due time and then posts a
 * message, which wakes this event loop at once. Why not `setTimeout`: Node's timers count whole milliseconds from
 * the loop's cached clock, so they fire up to a millisecond early or late (measured here: a 3 ms timer at p50
 * 0.9 ms early, a 0.5 ms one 0.6 ms late, since anything under 1 ms becomes 1 ms), and a delay line that re-arms
 * after an early wake-up loses another whole millisecond. Measured on this machine (300 wake-ups each, other
 * work running): this timer's lateness p50 0.15-0.22 ms, p99 0.5-1.5 ms (the helper thread and then this loop
 * waiting for a core). Used by the delay proxy (delay-proxy.ts), whose releases are the simulated distance.
 */
export interface PreciseTimer {
  /** Call the callback once at `time` (performance.now() ms), replacing any earlier setting. */
  at(time: number): void;
  cancel(): void;
}

// The helper thread. Shared memory: [0] Int32 generation (bumped on every change), [8] Float64 the earliest
// due time on the wall clock (performance.timeOrigin + now(), which both threads share), 0 for none. It posts
// when the time has come and then waits for the generation to move on, so it never posts twice for one setting.
const HELPER = `
const { parentPort, workerData } = require("node:worker_threads");
const generation = new Int32Array(workerData, 0, 1);
const due = new Float64Array(workerData, 8, 1);
let posted = -1;
for (;;) {
  const seen = Atomics.load(generation, 0);
  const at = due[0];
  if (at === 0 || posted === seen) { Atomics.wait(generation, 0, seen); continue; }
  const left = at - (performance.timeOrigin + performance.now());
  if (left > 0) { Atomics.wait(generation, 0, seen, left); continue; }
  posted = seen;
  parentPort.postMessage(0);
}
`;

class TimerThread {
  readonly #memory = new SharedArrayBuffer(16);
  readonly #generation = new Int32Array(this.#memory, 0, 1);
  readonly #due = new Float64Array(this.#memory, 8, 1);
  readonly #armed = new Map<object, { time: number; fire: () => void }>();
  readonly #worker: Worker;
  /** Resolves once the helper runs: until then a due time waits for the thread to start (~50-100 ms). */
  readonly ready: Promise<void>;

  constructor() {
    this.#worker = new Worker(HELPER, { eval: true, workerData: this.#memory });
    this.#worker.on("message", () => this.#fireDue());
    // The helper never keeps the process alive: whatever armed a timer (a socket, a run) does. After the
    // listener, which would ref the worker's port again.
    this.#worker.unref();
    this.ready = once(this.#worker, "online").then(() => undefined);
  }

  set(key: object, time: number, fire: () => void): void {
    this.#armed.set(key, { time, fire });
    this.#publish();
  }

  delete(key: object): void {
    if (this.#armed.delete(key)) this.#publish();
  }

  /** Tell the helper the earliest due time (0: nothing armed). */
  #publish(): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const { time } of this.#armed.values()) earliest = Math.min(earliest, time);
    this.#due[0] = this.#armed.size === 0 ? 0 : performance.timeOrigin + earliest;
    Atomics.add(this.#generation, 0, 1);
    Atomics.notify(this.#generation, 0);
  }

  #fireDue(): void {
    const now = performance.now();
    const due = [...this.#armed].filter(([, a]) => a.time <= now).sort(([, a], [, b]) => a.time - b.time);
    for (const [key] of due) this.#armed.delete(key);
    this.#publish();
    for (const [, a] of due) a.fire();
  }
}

let thread: TimerThread | undefined;

/** Start this thread's helper (once) and resolve when it runs, so that the first timers are not late. */
export function startPreciseTimers(): Promise<void> {
  thread ??= new TimerThread();
  return thread.ready;
}

/** A timer that calls `fire` at the time given to `at`, on this thread's event loop. */
export function preciseTimer(fire: () => void): PreciseTimer {
  thread ??= new TimerThread();
  const shared = thread;
  const key = {};
  return {
    at: (time) => shared.set(key, time, fire),
    cancel: () => shared.delete(key),
  };
}
