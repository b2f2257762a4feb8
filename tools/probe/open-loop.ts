import { Pool } from "undici";
import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";
import { exchange } from "./exchange.ts";
import type { ProbeRequest } from "./mix.ts";
import { openLoop } from "./schedule.ts";
import { type ProbeResult, pathOf } from "./summary.ts";

export interface ProbeClientOptions {
  /** Edge base URL, e.g. http://localhost:8787. */
  url: string;
  rows: readonly HeldoutRow[];
  /** The model the requests name. */
  model: string;
  /** Its edge variant's name in the fixture, if it has one (edge, cache and degraded answers are its). */
  edgeModel: string | undefined;
  /** Extra request headers (API key, location override). */
  headers?: Record<string, string>;
  /** Per-request timeout in ms. Default 5000. */
  timeoutMs?: number;
  /** Connections to the edge. Default 64. */
  connections?: number;
}

export interface OpenLoopOptions extends ProbeClientOptions {
  /** Requests per second, sent on schedule whether or not earlier ones answered. */
  rate: number;
  durationS: number;
  next: () => ProbeRequest;
  /** Called about once a second with the number sent so far. */
  onProgress?: (sent: number, total: number) => void;
}

/** The body of a probe request; benchmarks that send the probe's rows with another client use the same bytes. */
export const classifyBody = (model: string, inputs: readonly number[]): string => JSON.stringify({ model, inputs });

/**
 * A connection pool to `url` and the one function every probe request goes through, warm-up included (so that
 * V8 has compiled the code the timed requests run): send a request, time it from `dueAt` to its whole answer
 * (parsing it comes after), and classify the answer.
 */
function probeClient(options: ProbeClientOptions) {
  const { url, rows, model, edgeModel, headers = {}, timeoutMs = 5000, connections = 64 } = options;
  const pool = new Pool(new URL(url).origin, { connections, pipelining: 1 });
  const requestHeaders = { "content-type": "application/json", ...headers };
  const send = async (request: ProbeRequest, dueAt: number): Promise<ProbeResult> => {
    try {
      const { status, text, doneAt } = await exchange(pool, {
        path: "/v1/classify",
        method: "POST",
        headers: requestHeaders,
        body: classifyBody(model, request.inputs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const latencyMs = doneAt - dueAt;
      if (status !== 200) {
        return { path: "error", latencyMs, status, error: `HTTP ${status}: ${text.slice(0, 200)}` };
      }
      const body = JSON.parse(text) as { servedBy?: string; predictions?: { class: number }[] };
      const path = pathOf(body.servedBy);
      const label = body.predictions?.[0]?.class;
      // The answering model's own expected label for this row: the full model for regional answers. A cache
      // hit may hold either's; the hot rows are ones both agree on or the edge answered.
      const expected = rows[request.row]!.expected[path === "regional" || !edgeModel ? model : edgeModel];
      return {
        path,
        latencyMs,
        status: 200,
        region: path === "regional" ? body.servedBy!.slice("regional:".length) : undefined,
        correct: expected ? label === argmax(expected) : undefined,
        error: path === "error" ? `unexpected servedBy ${JSON.stringify(body.servedBy)}` : undefined,
      };
    } catch (err) {
      return { path: "error", latencyMs: performance.now() - dueAt, status: 0, error: (err as Error).message };
    }
  };
  return { send, close: () => pool.close() };
}

/**
 * Send `requests` requests one after another and drop the answers, before a timed run: V8 optimises the
 * client's code (undici's and send's) only after many calls, and until then every request costs more. Measured
 * against the no-op server at 30 req/s, p50: 1.1–1.4 ms cold, 0.8–0.9 ms after 1000–3000 requests, hey 0.8–1.0
 * (docs/performance.md). Meant for the no-op server (floor.ts), so that the target never sees the warm-up.
 */
export async function warmUp(options: ProbeClientOptions & { next: () => ProbeRequest; requests: number }) {
  const client = probeClient(options);
  for (let i = 0; i < options.requests; i++) await client.send(options.next(), performance.now());
  await client.close();
}

/**
 * Open-loop load (schedule.ts): request i is due at start + i/rate and its latency counts from that moment, so
 * a slow server shows up as latency rather than as a lower send rate (no coordinated omission).
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<{ results: ProbeResult[]; sent: number }> {
  const { rate, durationS, next, onProgress } = options;
  const client = probeClient(options);
  const total = Math.max(1, Math.round(rate * durationS));
  const results: ProbeResult[] = [];
  const inflight: Promise<void>[] = [];
  await openLoop(
    rate,
    total,
    (_, due) => {
      inflight.push(client.send(next(), due).then((r) => void results.push(r)));
    },
    onProgress && ((sent) => onProgress(sent, total)),
  );
  await Promise.all(inflight);
  await client.close();
  return { results, sent: total };
}
