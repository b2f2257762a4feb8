import { Pool } from "undici";
import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";
import type { ProbeRequest } from "./mix.ts";
import { openLoop } from "./schedule.ts";
import { type ProbeResult, pathOf } from "./summary.ts";

export interface OpenLoopOptions {
  /** Edge base URL, e.g. http://localhost:8787. */
  url: string;
  /** Requests per second, sent on schedule whether or not earlier ones answered. */
  rate: number;
  durationS: number;
  next: () => ProbeRequest;
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
  /** Called about once a second with the number sent so far. */
  onProgress?: (sent: number, total: number) => void;
}

/** The body of a probe request; benchmarks that send the probe's rows with another client use the same bytes. */
export const classifyBody = (model: string, inputs: readonly number[]): string => JSON.stringify({ model, inputs });

/**
 * Open-loop load (schedule.ts): request i is due at start + i/rate and its latency counts from that moment, so
 * a slow server shows up as latency rather than as a lower send rate (no coordinated omission).
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<{ results: ProbeResult[]; sent: number }> {
  const { url, rate, durationS, next, rows, model, edgeModel } = options;
  const { headers = {}, timeoutMs = 5000, connections = 64, onProgress } = options;
  const pool = new Pool(new URL(url).origin, { connections, pipelining: 1 });
  const total = Math.max(1, Math.round(rate * durationS));
  const results: ProbeResult[] = [];
  const inflight: Promise<void>[] = [];

  const send = async (request: ProbeRequest, dueAt: number) => {
    try {
      const response = await pool.request({
        path: "/v1/classify",
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: classifyBody(model, request.inputs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await response.body.text();
      const latencyMs = performance.now() - dueAt;
      if (response.statusCode !== 200) {
        results.push({
          path: "error",
          latencyMs,
          status: response.statusCode,
          error: `HTTP ${response.statusCode}: ${text.slice(0, 200)}`,
        });
        return;
      }
      const body = JSON.parse(text) as { servedBy?: string; predictions?: { class: number }[] };
      const path = pathOf(body.servedBy);
      const label = body.predictions?.[0]?.class;
      // The answering model's own expected label for this row: the full model for regional answers. A cache
      // hit may hold either's; the hot rows are ones both agree on or the edge answered.
      const expected = rows[request.row]!.expected[path === "regional" || !edgeModel ? model : edgeModel];
      results.push({
        path,
        latencyMs,
        status: 200,
        region: path === "regional" ? body.servedBy!.slice("regional:".length) : undefined,
        correct: expected ? label === argmax(expected) : undefined,
        error: path === "error" ? `unexpected servedBy ${JSON.stringify(body.servedBy)}` : undefined,
      });
    } catch (err) {
      results.push({ path: "error", latencyMs: performance.now() - dueAt, status: 0, error: (err as Error).message });
    }
  };

  await openLoop(
    rate,
    total,
    (_, due) => {
      inflight.push(send(next(), due));
    },
    onProgress && ((sent) => onProgress(sent, total)),
  );
  await Promise.all(inflight);
  await pool.close();
  return { results, sent: total };
}
