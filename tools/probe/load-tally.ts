import type { LoadResponse } from "./load-response.ts";
import { type LatencyStats, latencyStats, quantileOrZero } from "./summary.ts";

/** What a load run (load.ts) amounted to. */
export interface LoadSummary {
  /** Requests that ended, answered or failed. */
  requests: number;
  /** Answers with status 200. */
  ok: number;
  /** Requests by HTTP status; 0 for those no answer came to. */
  statuses: Record<number, number>;
  /** Seconds the run took, from its start to its last answer. */
  durationS: number;
  /** Requests ended per second of `durationS`. */
  reqPerSec: number;
  /** Latency of the 200s, from when each was due. */
  latency: LatencyStats;
  /** The generator's own lateness over every request, in ms (2 decimals). */
  sendLagMs: { p50: number; p99: number; max: number };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Counts a run's requests as they end, and sums them up. */
export class LoadTally {
  #statuses: Record<number, number> = {};
  #latencies: number[] = [];
  #lags: number[] = [];

  record(response: Pick<LoadResponse, "status" | "latencyMs" | "sendLagMs">): void {
    this.#statuses[response.status] = (this.#statuses[response.status] ?? 0) + 1;
    if (response.status === 200) this.#latencies.push(response.latencyMs);
    this.#lags.push(response.sendLagMs);
  }

  /** The run so far, over `durationS` seconds. */
  summary(durationS: number): LoadSummary {
    const requests = this.#lags.length;
    const lags = [...this.#lags].sort((a, b) => a - b);
    return {
      requests,
      ok: this.#statuses[200] ?? 0,
      statuses: { ...this.#statuses },
      durationS,
      reqPerSec: durationS > 0 ? requests / durationS : 0,
      latency: latencyStats(this.#latencies),
      sendLagMs: {
        p50: round2(quantileOrZero(lags, 0.5)),
        p99: round2(quantileOrZero(lags, 0.99)),
        max: round2(lags.at(-1) ?? 0),
      },
    };
  }
}
