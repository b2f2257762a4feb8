import { Pool } from "undici";
import { openLoop as schedule } from "../../tools/probe/schedule.ts";

/** One request of a run. */
export interface LoadRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** How one request ended. Latency counts from when it was due, so a stalled server shows as latency. */
export interface LoadResponse {
  /** ms from the start of the run at which the request was due. */
  dueMs: number;
  latencyMs: number;
  /** How late the request left (the generator's own timer lateness), in ms; part of `latencyMs`. */
  sendLagMs: number;
  /** HTTP status; 0 when no response came (connection reset or refused, timeout). */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Why no response came. */
  error?: string;
}

export interface OpenLoopOptions {
  /** `http://host:port` of the server under test. */
  origin: string;
  /** Requests per second, sent on schedule whether or not earlier ones answered. */
  rate: number;
  durationS: number;
  /** The i-th request. */
  next: (i: number) => LoadRequest;
  /** Called once per request as it ends (keep what you need: results are not stored here). */
  onResponse: (response: LoadResponse, request: LoadRequest, i: number) => void;
  /** Connections to the server. Default 64. */
  connections?: number;
  /** Per-request timeout, in ms. Default 5000. */
  timeoutMs?: number;
  /** Checked before each send: true ends the run early (what was sent is still awaited). Default: never. */
  stopWhen?: () => boolean;
}

/**
 * Open-loop load (wrk2-style, no coordinated omission): request i is due at start + i/rate; a server that
 * slows down shows up as latency and as requests in flight, not as a lower send rate. Resolves when every
 * request has ended.
 */
export async function openLoop(options: OpenLoopOptions): Promise<{ sent: number }> {
  const { origin, rate, durationS, next, onResponse, connections = 64, timeoutMs = 5000, stopWhen } = options;
  if (!(rate > 0) || !(durationS > 0)) throw new Error(`rate and durationS must be > 0, got ${rate}, ${durationS}`);
  const pool = new Pool(origin, { connections, pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const total = Math.max(1, Math.round(rate * durationS));
  const inflight = new Set<Promise<void>>();
  const started = performance.now();

  const send = async (i: number, request: LoadRequest, dueMs: number) => {
    const due = started + dueMs;
    const sendLagMs = performance.now() - due;
    try {
      const res = await pool.request({
        method: (request.method ?? "POST") as "POST",
        path: request.path,
        headers: request.headers,
        body: request.body,
      });
      const body = await res.body.text();
      onResponse(
        { dueMs, latencyMs: performance.now() - due, sendLagMs, status: res.statusCode, headers: res.headers, body },
        request,
        i,
      );
    } catch (err) {
      const error = `${(err as Error & { code?: string }).code ?? ""} ${(err as Error).message}`.trim();
      onResponse(
        { dueMs, latencyMs: performance.now() - due, sendLagMs, status: 0, headers: {}, body: "", error },
        request,
        i,
      );
    }
  };

  // The probe's scheduler (tools/probe/schedule.ts): a timer until 2 ms before each send, then polling.
  // A timer alone sent requests late on this shared machine (validate:latency's send lag: docs/performance.md),
  // and that lateness counted as the server's latency.
  const sent = await schedule(
    rate,
    total,
    (i, due) => {
      const p = send(i, next(i), due - started);
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    },
    undefined,
    stopWhen,
  );
  await Promise.all(inflight);
  await pool.close();
  return { sent };
}

/** A header's single value (undici gives arrays for repeated headers). */
export const headerValue = (headers: LoadResponse["headers"], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Closed-loop load: `connections` clients, each sending its next request as soon as the last one answered, for
 * `durationS` seconds: the most the server answers with this many requests in flight (its capacity, as far as
 * a load generator on the same machine can tell).
 */
export async function closedLoop(options: {
  origin: string;
  connections: number;
  durationS: number;
  next: (i: number) => LoadRequest;
}): Promise<{ requests: number; ok: number; durationS: number; statuses: Record<number, number> }> {
  const { origin, connections, durationS, next } = options;
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const statuses: Record<number, number> = {};
  const started = performance.now();
  const end = started + durationS * 1000;
  let i = 0;
  const client = async () => {
    while (performance.now() < end) {
      const request = next(i++);
      try {
        const res = await pool.request({
          method: (request.method ?? "POST") as "POST",
          path: request.path,
          headers: request.headers,
          body: request.body,
        });
        await res.body.dump();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      } catch {
        statuses[0] = (statuses[0] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  const elapsedS = (performance.now() - started) / 1000;
  await pool.close();
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { requests, ok: statuses[200] ?? 0, durationS: elapsedS, statuses };
}
