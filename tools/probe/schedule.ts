import { setImmediate as immediate, setTimeout as sleep } from "node:timers/promises";

/** How long before a send is due the scheduler stops sleeping on a timer and polls instead, in ms. */
const POLL_MS = 2;

/** When request `i` of a schedule at `rate` per second is due: `startMs + i / rate` seconds. */
export const dueAt = (startMs: number, i: number, rate: number): number => startMs + (i * 1000) / rate;

/**
 * Call `send(i, due)` for i = 0 .. total-1 at `rate` per second, open loop: on schedule whether or not earlier
 * requests answered, each passed the time it was due (on `performance.now()`), which its latency counts from.
 * Sleeps on a timer until POLL_MS before each send, then polls with setImmediate, which lets the event loop
 * read the answers in between. Why not a timer alone: Node's timers fire a millisecond or more late, and a
 * latency counted from the due time would include that lateness (measured: p50 0.4 ms at 30 req/s), which is
 * the instrument's error, not the server's. When sends fall behind (the process was busy), the ones due are
 * sent at once, each still timed from its own due time, so a stall shows as latency (no coordinated omission).
 * `stopWhen`, checked before each send, ends the schedule early. Resolves with the number sent.
 */
export async function sendOnSchedule(
  rate: number,
  total: number,
  send: (i: number, due: number) => void,
  onProgress?: (sent: number) => void,
  stopWhen?: () => boolean,
): Promise<number> {
  const start = performance.now();
  let lastProgress = start;
  let i = 0;
  for (; i < total && !stopWhen?.(); i++) {
    const due = dueAt(start, i, rate);
    const ahead = due - performance.now() - POLL_MS;
    if (ahead > 0) await sleep(ahead);
    while (performance.now() < due) await immediate();
    send(i, due);
    if (onProgress && due - lastProgress >= 1000) {
      onProgress(i + 1);
      lastProgress = due;
    }
  }
  return i;
}
