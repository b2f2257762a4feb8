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

/**
 * Watch this process's GC pauses until `stop()`. In validate:latency the load generator and the delay proxies
 * share this process, so a pause here delays both sends and the simulated network's bytes.
 */
export function watchGc(): { stop(): GcPauses } {
  const entries: { durationMs: number; kind: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as { detail?: { kind?: number } }).detail;
      entries.push({ durationMs: e.duration, kind: detail?.kind ?? 0 });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop() {
      observer.disconnect();
      return gcPauses(entries);
    },
  };
}
