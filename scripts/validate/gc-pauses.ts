import { constants, PerformanceObserver } from "node:perf_hooks";

/** A process's garbage-collection pauses over a span: how many, their sum and the longest, in ms. */
export interface GcPauses {
  count: number;
  /** Mark-compact (full) collections among them. */
  major: number;
  totalMs: number;
  maxMs: number;
}

/** Summarise GC pauses (`kind` is perf_hooks' `NODE_PERFORMANCE_GC_*`). Pure. */
export function gcPauses(entries: readonly { durationMs: number; kind: number }[]): GcPauses {
  let totalMs = 0;
  let maxMs = 0;
  let major = 0;
  for (const e of entries) {
    totalMs += e.durationMs;
    maxMs = Math.max(maxMs, e.durationMs);
    if (e.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
  }
  const round = (v: number) => Math.round(v * 100) / 100;
  return { count: entries.length, major, totalMs: round(totalMs), maxMs: round(maxMs) };
}

/** A span of time on performance.now()'s clock, ms. */
export interface Span {
  startMs: number;
  endMs: number;
}

/**
 * How many of `requests` (each from when it was due to its answer) were in flight during at least one of
 * `pauses`: the requests a GC pause could have made slower. Pure.
 */
export function requestsInPauses(requests: readonly Span[], pauses: readonly Span[]): number {
  return requests.filter((r) => pauses.some((p) => p.startMs < r.endMs && p.endMs > r.startMs)).length;
}

/**
 * Watch this process's GC pauses until `stop()`, which returns them summed up and each one's span. In validate:latency this is the load generator's process, so a
 * pause here delays its sends and its reading of answers (and, with `--proxies in-process`, the simulated
 * network's bytes).
 */
export function watchGc(): { stop(): { pauses: GcPauses; spans: Span[] } } {
  const entries: { durationMs: number; kind: number; startMs: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as { detail?: { kind?: number } }).detail;
      entries.push({ durationMs: e.duration, kind: detail?.kind ?? 0, startMs: e.startTime });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop() {
      observer.disconnect();
      return {
        pauses: gcPauses(entries),
        spans: entries.map((e) => ({ startMs: e.startMs, endMs: e.startMs + e.durationMs })),
      };
    },
  };
}
