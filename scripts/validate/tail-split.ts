import { type LatencyStats, latencyStats, type ProbePath } from "../../tools/probe/summary.ts";

/**
 * What sets a run's tail, from its answers alone: which path the slow requests took, and for forwards how
 * much of their time the edge spent waiting for the region (its own Server-Timing) against the rest (the
 * client's hop to the edge and back, the edge's own work, the generator's send lag). Pure.
 */

/**
 * The edge's time for its region call, from an answer's Server-Timing (`regional;dur=8.000;desc="eu"`,
 * edge/routes/server-timing.ts), in ms; undefined when the answer has no such entry.
 */
export function regionCallMs(serverTiming: string | undefined): number | undefined {
  if (serverTiming === undefined) return undefined;
  for (const entry of serverTiming.split(",")) {
    const [name, ...params] = entry.split(";").map((s) => s.trim());
    if (name !== "regional") continue;
    const dur = params.find((p) => p.startsWith("dur="));
    const ms = dur === undefined ? Number.NaN : Number(dur.slice(4));
    return Number.isFinite(ms) ? ms : undefined;
  }
  return undefined;
}

/** One answered request, as the tail split reads it. */
export interface TailSample {
  path: ProbePath;
  latencyMs: number;
  /** The region call's time the edge reported (regional answers only), ms. */
  regionMs?: number;
}

export interface TailSplit {
  /** Requests slower than `overMs`, by path: what the requests over the line were. */
  overByPath: Partial<Record<ProbePath, number>>;
  over: number;
  overMs: number;
  /**
   * Regional answers split in two: the region call as the edge timed it, and the rest of the latency the client
   * saw (latency minus that call). Null without regional answers carrying a Server-Timing.
   */
  forwards: { regionCall: LatencyStats; rest: LatencyStats } | null;
}

/** Which paths the requests slower than `overMs` took, and the split of the regional answers' latency. */
export function tailSplit(samples: readonly TailSample[], overMs: number): TailSplit {
  const overByPath: Partial<Record<ProbePath, number>> = {};
  let over = 0;
  const regionCalls: number[] = [];
  const rests: number[] = [];
  for (const s of samples) {
    if (s.latencyMs > overMs) {
      over++;
      overByPath[s.path] = (overByPath[s.path] ?? 0) + 1;
    }
    if (s.path === "regional" && s.regionMs !== undefined) {
      regionCalls.push(s.regionMs);
      rests.push(s.latencyMs - s.regionMs);
    }
  }
  return {
    overByPath,
    over,
    overMs,
    forwards: regionCalls.length > 0 ? { regionCall: latencyStats(regionCalls), rest: latencyStats(rests) } : null,
  };
}
