import { timingEntry as entry, TIMING_SEPARATOR as SEP } from "../../protocol/server-timing.ts";
import type { ServeTrace } from "../serve.ts";

/**
 * The Server-Timing value of an answer, in the pools' format (protocol/server-timing.ts: `name;dur=1.000;desc="..."`,
 * entries joined by `, `): `cache` (its time and tier, or `bypass`), `edge` (the edge model that ran, when the model has one;
 * its time cannot be measured inside a Worker), `regional` (time and region), `hedge` when one was sent, `reserve` (the
 * ms of the budget the regions' deadline kept back for the client's round trip, when a region was wanted and that
 * round trip is known; `client-rtt-capped` when it was longer than RTT_RESERVE_MAX_SHARE allows). Written here rather than by
 * hono/timing, whose middleware and per-metric bookkeeping showed in the Worker's profile
 * (docs/performance.md).
 */
export function serverTimingValue(trace: ServeTrace, edgeModel: string | undefined): string {
  const { cache, edge, regional, reserve } = trace;
  let value =
    cache.tier === "bypass"
      ? CACHE_BYPASS
      : cache.ms === 0
        ? CACHE_AT_ZERO[cache.tier]
        : entry("cache", cache.ms, cache.tier === "miss" ? "miss" : `hit-${cache.tier}`);
  if (edge && edgeModel !== undefined) value += SEP + edgeEntry(edgeModel);
  if (regional) {
    value += SEP + entry("regional", regional.ms, regional.region);
    if (regional.hedged) value += SEP + HEDGE;
  }
  if (reserve) value += SEP + entry("reserve", reserve.ms, reserve.capped ? "client-rtt-capped" : "client-rtt");
  return value;
}

/*
 * The entries that are the same on every answer of a kind, written once: an answer at the edge or from the
 * isolate's cache is a few tens of µs of the Worker's own CPU. (Inside a Worker the clock does not move without I/O, so a cache lookup's time is 0 there.)
 */
const CACHE_BYPASS = entry("cache", undefined, "bypass");
const HEDGE = entry("hedge");
const CACHE_AT_ZERO = {
  l1: entry("cache", 0, "hit-l1"),
  l2: entry("cache", 0, "hit-l2"),
  miss: entry("cache", 0, "miss"),
} as const;
/** The `edge` entry per edge model name: as many as the Worker serves models. */
const edgeEntries = new Map<string, string>();
function edgeEntry(edgeModel: string): string {
  let value = edgeEntries.get(edgeModel);
  if (value === undefined) {
    value = entry("edge", undefined, edgeModel);
    edgeEntries.set(edgeModel, value);
  }
  return value;
}
