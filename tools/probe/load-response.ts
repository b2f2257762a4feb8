import type { Exchange } from "./exchange.ts";

/** One request of a load run (load.ts). */
export interface LoadRequest {
  /** Default POST. */
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** How one request of a load run ended. Latency counts from when it was due, so a stalled server shows as latency. */
export interface LoadResponse {
  /** ms from the start of the run at which the request was due (closed loop: when it was sent). */
  dueMs: number;
  /** From when it was due to its answer's last byte, in ms. */
  latencyMs: number;
  /** How late the request left (the generator's own lateness), in ms; part of `latencyMs`. 0 in a closed loop. */
  sendLagMs: number;
  /** HTTP status; 0 when no answer came (connection reset or refused, timeout). */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Why no answer came: the error's code and message. */
  error?: string;
}

/** When one request was due and sent, and when the run started (all on performance.now()). */
export interface SendTimes {
  startedAt: number;
  dueAt: number;
  sentAt: number;
}

/**
 * The account of one request: its answer, or the error that came instead (`failedAt`: when it did), timed from
 * when it was due. Pure.
 */
export function loadResponse(
  times: SendTimes,
  outcome: { answer: Exchange } | { error: Error & { code?: string }; failedAt: number },
): LoadResponse {
  const dueMs = times.dueAt - times.startedAt;
  const sendLagMs = Math.max(0, times.sentAt - times.dueAt);
  if ("answer" in outcome) {
    const { status, headers, text, doneAt } = outcome.answer;
    return { dueMs, latencyMs: doneAt - times.dueAt, sendLagMs, status, headers, body: text };
  }
  const error = `${outcome.error.code ?? ""} ${outcome.error.message}`.trim();
  return { dueMs, latencyMs: outcome.failedAt - times.dueAt, sendLagMs, status: 0, headers: {}, body: "", error };
}

/** A header's single value (undici gives arrays for repeated headers). */
export const headerValue = (headers: LoadResponse["headers"], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};
