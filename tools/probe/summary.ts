import { nearestRank } from "../../protocol/quantile.ts";

/** Which tier answered a probe, from the response's `servedBy`; `error` for failures. */
export type ProbePath = "cache" | "edge" | "regional" | "degraded" | "error";
export const PROBE_PATHS: readonly ProbePath[] = ["cache", "edge", "regional", "degraded", "error"];

export function pathOf(servedBy: unknown): ProbePath {
  if (servedBy === "cache" || servedBy === "edge" || servedBy === "degraded") return servedBy;
  if (typeof servedBy === "string" && servedBy.startsWith("regional:")) return "regional";
  return "error";
}

/** One probe's outcome. Latency is from the scheduled send time, so a stalled server cannot hide queueing. */
export interface ProbeResult {
  path: ProbePath;
  latencyMs: number;
  /** Region name for regional answers. */
  region?: string;
  /** HTTP status, or 0 when no response came. */
  status: number;
  /** Whether the label matched what the answering model is expected to say for that row. */
  correct?: boolean;
  /**
   * The edge answered while it could not check the tenant's global quota (`x-edgecascade-quota: unmetered`: its
   * Durable Object unreachable, the edge failing open).
   */
  unmetered?: boolean;
  error?: string;
}

export interface LatencyStats {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface ProbeSummary {
  url: string;
  startedAt: string;
  durationS: number;
  rateRps: number;
  sent: number;
  completed: number;
  errors: number;
  errorRate: number;
  /** Answers whose label differed from the answering model's expected label. */
  mismatches: number;
  /** Answers served while the probe's tenant's quota could not be checked (the edge failing open). */
  unmetered: number;
  overall: LatencyStats;
  paths: Partial<Record<ProbePath, LatencyStats>>;
  regions: Record<string, number>;
  /**
   * The 10 ms p95 target over every request sent, counting failures as never answered (infinitely slow):
   * it holds when at least 95% of requests were answered within the target.
   */
  target: { p95Ms: number; measuredP95Ms: number | null; holds: boolean };
  /**
   * Requests answered within each bound of `WITHIN_BOUNDS_MS` (failures never are): a histogram of the run,
   * which the SLO burn-rate rules read against `sent` (deploy/prometheus/probe-slo.rules.yml).
   */
  within: Record<string, number>;
  /** First few distinct error messages. */
  errorSamples: string[];
  /**
   * The probe's own floor: the latency of the same requests on the same schedule against a no-op server
   * (floor.ts), measured in the same run; null when not measured. What the probe reports for a path includes
   * about this much of its own (client, loopback, scheduling).
   */
  floor: LatencyStats | null;
}

/** The bounds, in ms, of the per-run latency histogram (`within`): the 10 ms target and its neighbours. */
export const WITHIN_BOUNDS_MS = [5, 10, 25, 50, 100, 250] as const;

/** The `q`-quantile (protocol/quantile.ts, nearest rank) of sorted values; 0 for none. */
export function quantileOrZero(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : nearestRank(sorted, q);
}

export function latencyStats(values: readonly number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return {
    count: sorted.length,
    p50Ms: round(quantileOrZero(sorted, 0.5)),
    p95Ms: round(quantileOrZero(sorted, 0.95)),
    p99Ms: round(quantileOrZero(sorted, 0.99)),
    maxMs: round(sorted.at(-1) ?? 0),
    meanMs: round(sorted.length ? sum / sorted.length : 0),
  };
}

/** Summarise a run: latency per path and overall, errors, regions, and the p95 target's verdict. */
export function summarize(
  results: readonly ProbeResult[],
  run: {
    url: string;
    startedAt: string;
    durationS: number;
    rateRps: number;
    sent: number;
    targetP95Ms?: number;
    /** Latencies of the floor run (no-op server), if one was made. */
    floorMs?: readonly number[];
  },
): ProbeSummary {
  const { targetP95Ms = 10 } = run;
  const byPath = new Map<ProbePath, number[]>();
  const regions: Record<string, number> = {};
  const errorSamples = new Set<string>();
  let mismatches = 0;
  let unmetered = 0;
  for (const r of results) {
    const list = byPath.get(r.path) ?? [];
    list.push(r.latencyMs);
    byPath.set(r.path, list);
    if (r.region) regions[r.region] = (regions[r.region] ?? 0) + 1;
    if (r.correct === false) mismatches++;
    if (r.unmetered) unmetered++;
    if (r.error && errorSamples.size < 5) errorSamples.add(r.error);
  }
  const paths: Partial<Record<ProbePath, LatencyStats>> = {};
  for (const path of PROBE_PATHS) {
    const values = byPath.get(path);
    if (values) paths[path] = latencyStats(values);
  }
  const overall = latencyStats(results.map((r) => r.latencyMs));
  const errors = byPath.get("error")?.length ?? 0;
  const answered = results.filter((r) => r.path !== "error").map((r) => r.latencyMs);
  const withFailures = [...answered.sort((a, b) => a - b), ...new Array<number>(errors).fill(Number.POSITIVE_INFINITY)];
  const measured = quantileOrZero(withFailures, 0.95);
  const measuredP95Ms = Number.isFinite(measured) ? Math.round(measured * 1000) / 1000 : null;
  return {
    url: run.url,
    startedAt: run.startedAt,
    durationS: run.durationS,
    rateRps: run.rateRps,
    sent: run.sent,
    completed: results.length - errors,
    errors,
    errorRate: results.length ? Math.round((errors / results.length) * 1e4) / 1e4 : 0,
    mismatches,
    unmetered,
    overall,
    paths,
    regions,
    target: {
      p95Ms: targetP95Ms,
      measuredP95Ms,
      holds: results.length > 0 && measuredP95Ms !== null && measuredP95Ms <= targetP95Ms,
    },
    within: Object.fromEntries(WITHIN_BOUNDS_MS.map((ms) => [String(ms), answered.filter((v) => v <= ms).length])),
    errorSamples: [...errorSamples],
    floor: run.floorMs ? latencyStats(run.floorMs) : null,
  };
}
