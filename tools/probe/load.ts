import { Pool } from "undici";
import { exchange } from "./exchange.ts";
import { type LoadRequest, type LoadResponse, loadResponse } from "./load-response.ts";
import { type LoadSummary, LoadTally } from "./load-tally.ts";
import { sendOnSchedule } from "./schedule.ts";

/**
 * The one load generator of the probe, the benchmarks and the validations: open loop at a fixed rate (each
 * request timed from when it was due, its send lag reported) and closed loop with N requests in flight, both
 * through `LoadClient` (an undici Pool and `exchange`, the client validate:probe holds against hey).
 */

export interface LoadClientOptions {
  /** Connections to the server. Default 64. */
  connections?: number;
  /** Per-request timeout for the answer's headers and for its body, in ms. Default 5000. */
  timeoutMs?: number;
}

/** Connections to one server, and the one way every request of a run is sent and accounted. */
export class LoadClient {
  /** `http://host:port` of the server. */
  readonly origin: string;
  readonly #pool: Pool;
  readonly #timeoutMs: number;

  constructor(origin: string, options: LoadClientOptions = {}) {
    const { connections = 64, timeoutMs = 5000 } = options;
    if (!Number.isInteger(connections) || connections < 1) {
      throw new Error(`connections must be an integer >= 1, got ${connections}`);
    }
    if (!(timeoutMs > 0)) throw new Error(`timeoutMs must be > 0, got ${timeoutMs}`);
    this.origin = new URL(origin).origin;
    this.#pool = new Pool(this.origin, { connections, pipelining: 1 });
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Send `request`, due at `dueAt` of a run started at `startedAt` (performance.now(); default: now, a request
   * timed from its send). Never rejects.
   */
  async send(request: LoadRequest, dueAt?: number, startedAt?: number): Promise<LoadResponse> {
    const sentAt = performance.now();
    const due = dueAt ?? sentAt;
    const times = { startedAt: startedAt ?? due, dueAt: due, sentAt };
    try {
      const answer = await exchange(this.#pool, {
        method: (request.method ?? "POST") as "POST",
        path: request.path,
        headers: request.headers,
        body: request.body,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      return loadResponse(times, { answer });
    } catch (err) {
      return loadResponse(times, { error: err as Error, failedAt: performance.now() });
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

export interface RunOptions extends LoadClientOptions {
  /** `http://host:port` of the server under test. */
  origin: string;
  /** A client of `origin` to send through (left open). Default: one of the run's own, closed at its end. */
  client?: LoadClient;
  /** The i-th request. */
  next: (i: number) => LoadRequest;
  /** Called as each request ends (keep what you need: answers are not stored). */
  onResponse?: (response: LoadResponse, request: LoadRequest, i: number) => void;
  /** Checked before each send: true ends the run early (what was sent is still awaited). Default: never. */
  stopWhen?: () => boolean;
}

export interface OpenLoopOptions extends RunOptions {
  /** Requests per second, sent on schedule whether or not earlier ones answered. */
  rate: number;
  durationS: number;
  /** Called about once a second with the number sent so far and the run's total. */
  onProgress?: (sent: number, total: number) => void;
}

export interface ClosedLoopOptions extends RunOptions {
  /** Requests in flight: each of this many loops sends its next request when its last one ended. */
  connections: number;
  /** Seconds after which no request is sent. Default: no limit (then `requests` or `stopWhen` ends the run). */
  durationS?: number;
  /** Requests to send in all. Default: no limit. */
  requests?: number;
}

export interface LoadRun {
  /** Requests sent (every one of them ended before the run resolved). */
  sent: number;
  summary: LoadSummary;
}

/** Run `body` with the run's client, closing it afterwards if it was made here. */
async function withClient<T>(options: RunOptions, body: (c: LoadClient) => Promise<T>): Promise<T> {
  const { origin, client } = options;
  if (client && client.origin !== new URL(origin).origin) {
    throw new Error(`client is a client of ${client.origin}, not of origin ${origin}`);
  }
  const used = client ?? new LoadClient(origin, options);
  try {
    return await body(used);
  } finally {
    if (!client) await used.close();
  }
}

/**
 * Open-loop load (wrk2-style, no coordinated omission): request i is due at start + i/rate (schedule.ts: a timer
 * until 2 ms before, then polling, so that timer lateness is not counted as the server's latency); a server
 * that slows down shows up as latency and as requests in flight, not as a lower send rate. Resolves when every
 * request has ended.
 */
export async function openLoop(options: OpenLoopOptions): Promise<LoadRun> {
  const { rate, durationS, next, onResponse, stopWhen, onProgress } = options;
  if (!(rate > 0) || !(durationS > 0)) throw new Error(`rate and durationS must be > 0, got ${rate}, ${durationS}`);
  return withClient(options, async (client) => {
    const total = Math.max(1, Math.round(rate * durationS));
    const tally = new LoadTally();
    const inflight = new Set<Promise<void>>();
    const startedAt = performance.now();
    const sent = await sendOnSchedule(
      rate,
      total,
      (i, due) => {
        const request = next(i);
        const p = client.send(request, due, startedAt).then((response) => {
          tally.record(response);
          onResponse?.(response, request, i);
        });
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
      },
      onProgress && ((n) => onProgress(n, total)),
      stopWhen,
    );
    await Promise.all(inflight);
    return { sent, summary: tally.summary((performance.now() - startedAt) / 1000) };
  });
}

/**
 * `concurrency` loops, each taking its next step as soon as its last one ended, until `stop()` holds before a
 * step. Resolves with the steps taken once all have ended. The closed loop itself, for any transport.
 */
export async function runClosedLoop(
  concurrency: number,
  stop: (i: number) => boolean,
  step: (i: number) => Promise<void>,
): Promise<number> {
  let i = 0;
  const loop = async () => {
    while (!stop(i)) await step(i++);
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return i;
}

/**
 * Closed-loop load: `connections` requests in flight, each loop sending its next request as soon as its last one
 * answered, until `durationS`, `requests` or `stopWhen` ends it: the most the server answers with this many
 * requests in flight (its capacity, as far as a load generator on the same machine can tell). Each request is
 * timed from when it was sent.
 */
export async function closedLoop(options: ClosedLoopOptions): Promise<LoadRun> {
  const { connections, durationS, requests, next, onResponse, stopWhen } = options;
  if (!Number.isInteger(connections) || connections < 1) {
    throw new Error(`connections must be an integer >= 1, got ${connections}`);
  }
  if (durationS === undefined && requests === undefined && stopWhen === undefined) {
    throw new Error("a closed loop needs durationS, requests or stopWhen to end");
  }
  return withClient(options, async (client) => {
    const tally = new LoadTally();
    const startedAt = performance.now();
    const end = durationS === undefined ? Number.POSITIVE_INFINITY : startedAt + durationS * 1000;
    const stop = (i: number) =>
      (requests !== undefined && i >= requests) || performance.now() >= end || (stopWhen?.() ?? false);
    const sent = await runClosedLoop(connections, stop, async (i) => {
      const request = next(i);
      const response = await client.send(request, undefined, startedAt);
      tally.record(response);
      onResponse?.(response, request, i);
    });
    return { sent, summary: tally.summary((performance.now() - startedAt) / 1000) };
  });
}
