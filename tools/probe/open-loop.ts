import type { HeldoutRow } from "../../protocol/heldout.ts";
import { closedLoop, openLoop } from "./load.ts";
import type { LoadRequest } from "./load-response.ts";
import type { ProbeRequest } from "./mix.ts";
import { readProbeAnswer } from "./read-answer.ts";
import type { ProbeResult } from "./summary.ts";

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
 * The probe's side of a load run (load.ts), warm-up included (so that V8 has compiled the code the timed requests
 * run): the mix's requests as `/v1/classify` calls, and each answer read (read-answer.ts) into `results`.
 */
function probeRequests(options: ProbeClientOptions, next: () => ProbeRequest) {
  const { rows, model, edgeModel, headers = {} } = options;
  const requestHeaders = { "content-type": "application/json", ...headers };
  const rowOf: number[] = [];
  const results: ProbeResult[] = [];
  return {
    results,
    next: (i: number): LoadRequest => {
      const request = next();
      rowOf[i] = request.row;
      return { path: "/v1/classify", headers: requestHeaders, body: classifyBody(model, request.inputs) };
    },
    onResponse: (response: Parameters<typeof readProbeAnswer>[0], _: LoadRequest, i: number) => {
      results.push(readProbeAnswer(response, rows[rowOf[i]!]!, model, edgeModel));
    },
  };
}

/**
 * Send `requests` requests one after another and drop the answers, before a timed run: V8 optimises the
 * client's code (undici's and the generator's) only after many calls, and until then every request costs more.
 * Measured against the no-op server at 30 req/s, p50: 1.1–1.4 ms cold, 0.8–0.9 ms after 1000–3000 requests, hey
 * 0.8–1.0 (docs/performance.md). Meant for the no-op server (floor.ts), so that the target never sees the warm-up.
 */
export async function warmUp(options: ProbeClientOptions & { next: () => ProbeRequest; requests: number }) {
  const { next, onResponse } = probeRequests(options, options.next);
  await closedLoop({
    origin: options.url,
    connections: 1,
    requests: options.requests,
    timeoutMs: options.timeoutMs,
    next,
    onResponse,
  });
}

/**
 * Open-loop load (load.ts): request i is due at start + i/rate and its latency counts from that moment, so a slow
 * server shows up as latency rather than as a lower send rate (no coordinated omission).
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<{ results: ProbeResult[]; sent: number }> {
  const { results, next, onResponse } = probeRequests(options, options.next);
  const { sent } = await openLoop({
    origin: options.url,
    rate: options.rate,
    durationS: options.durationS,
    connections: options.connections,
    timeoutMs: options.timeoutMs,
    next,
    onResponse,
    onProgress: options.onProgress,
  });
  return { results, sent };
}
