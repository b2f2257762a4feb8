import type { ServeTrace } from "../serve.ts";

const quote = (s: string) => `"${s.replace(/[\\"]/g, "\\$&")}"`;
const entry = (name: string, ms?: number, desc?: string) =>
  `${name}${ms === undefined ? "" : `;dur=${ms.toFixed(1)}`}${desc === undefined ? "" : `;desc=${quote(desc)}`}`;

/**
 * The Server-Timing value of an answer, in hono/timing's format (`name;dur=1.0;desc="..."`, entries joined
 * by `,`): `cache` (its time and tier, or `bypass`), `edge` (the edge model that ran, when the model has one;
 * its time cannot be measured inside a Worker), `regional` (time and region), `hedge` when one was sent. Written here rather than by
 * hono/timing, whose middleware and per-metric bookkeeping showed in the Worker's profile
 * (docs/performance.md).
 */
export function serverTimingValue(trace: ServeTrace, edgeModel: string | undefined): string {
  const { cache, edge, regional } = trace;
  const entries = [
    cache.tier === "bypass"
      ? entry("cache", undefined, "bypass")
      : entry("cache", cache.ms, cache.tier === "miss" ? "miss" : `hit-${cache.tier}`),
  ];
  if (edge && edgeModel !== undefined) entries.push(entry("edge", undefined, edgeModel));
  if (regional) {
    entries.push(entry("regional", regional.ms, regional.region));
    if (regional.hedged) entries.push(entry("hedge"));
  }
  return entries.join(",");
}
