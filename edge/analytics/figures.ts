import { CONFIDENCE_BUCKETS, confidenceBucket, type DriftFigures, driftOf, shares } from "../../protocol/drift.ts";
import { type WilsonInterval, wilson } from "../../protocol/wilson.ts";

/**
 * The edge's figures from its data points, as docs/observability.md's SQL computes them from Analytics Engine:
 * every sum weighted by the point's `_sample_interval` (1 for the local in-memory dataset, which keeps every
 * point). `npm start`'s `/status` shows them; a deployed Worker's are the SQL's.
 */

/** A data point as Analytics Engine stores it (data-point.ts' layout) with its sample interval. */
export interface StoredPoint {
  /** The point's index (the model, or `<model>:audit`). */
  index?: string;
  blobs: readonly string[];
  doubles: readonly number[];
  sampleInterval: number;
}

export interface TierFigures {
  /** Answered requests (errors apart), weighted. */
  answered: number;
  cache: number;
  edge: number;
  regional: number;
  degraded: number;
  errors: number;
  /** Shares of the answered. */
  edgeShare: number;
  cacheShare: number;
  degradedRate: number;
  degradedReasons: Record<string, number>;
}

export interface LatencyFigures {
  requests: number;
  p95Ms: number;
  p99Ms: number;
}

export interface AuditFigures {
  /** Rows re-asked of a region, and how many it labelled as the edge did. */
  rows: number;
  agreeing: number;
  /** Audits that got no answer. */
  failed: number;
  agreement: number | null;
  /** Wilson 95% interval of the agreement. */
  interval: Pick<WilsonInterval, "lower" | "upper"> | null;
}

export interface ModelDrift extends DriftFigures {
  /** Answers per confidence bucket (protocol/drift.ts CONFIDENCE_BUCKETS, `le`). */
  confidence: Record<string, number>;
}

export interface EdgeFigures {
  points: number;
  models: Record<string, TierFigures>;
  /** Latency per colo ("" when request.cf has none, as locally). */
  latency: Record<string, LatencyFigures>;
  audits: Record<string, AuditFigures>;
  /** Per model, per version answered: predicted classes against the held-out baseline. */
  drift: Record<string, Record<string, ModelDrift>>;
}

/**
 * The held-out class counts (config.json `heldout.classCounts`) and labels of a model's versions; `fallback`, the
 * bundled served version's, stands for a version the regions answer with that the Worker's bundle predates.
 */
export type Baselines = Record<
  string,
  { labels: readonly string[]; versions: Record<string, readonly number[]>; fallback?: readonly number[] }
>;

/** The weighted `q` quantile (the smallest value whose cumulative weight reaches q of the total). */
export function weightedQuantile(values: readonly { value: number; weight: number }[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a.value - b.value);
  const total = sorted.reduce((sum, v) => sum + v.weight, 0);
  let cumulative = 0;
  for (const v of sorted) {
    cumulative += v.weight;
    if (cumulative >= q * total) return v.value;
  }
  return sorted.at(-1)!.value;
}

const TIERS = ["cache", "edge", "regional", "degraded"] as const;

function tierFigures(points: StoredPoint[]): TierFigures {
  const f = { answered: 0, cache: 0, edge: 0, regional: 0, degraded: 0, errors: 0 };
  const degradedReasons: Record<string, number> = {};
  for (const p of points) {
    const tier = p.blobs[0]!;
    const w = p.sampleInterval;
    if (tier === "error") {
      f.errors += w;
      continue;
    }
    if (!(TIERS as readonly string[]).includes(tier)) continue;
    f.answered += w;
    f[tier as (typeof TIERS)[number]] += w;
    if (tier === "degraded") degradedReasons[p.blobs[1]!] = (degradedReasons[p.blobs[1]!] ?? 0) + w;
  }
  const share = (n: number) => (f.answered > 0 ? n / f.answered : 0);
  return {
    ...f,
    edgeShare: share(f.edge),
    cacheShare: share(f.cache),
    degradedRate: share(f.degraded),
    degradedReasons,
  };
}

function group<K extends string>(points: StoredPoint[], key: (p: StoredPoint) => K | undefined): Map<K, StoredPoint[]> {
  const groups = new Map<K, StoredPoint[]>();
  for (const p of points) {
    const k = key(p);
    if (k === undefined) continue;
    const list = groups.get(k);
    if (list) list.push(p);
    else groups.set(k, [p]);
  }
  return groups;
}

/** Every figure of docs/observability.md's queries, over `points`. */
export function edgeFigures(points: StoredPoint[], baselines: Baselines): EdgeFigures {
  const requests = points.filter((p) => p.blobs[0] !== "audit");
  const audits = points.filter((p) => p.blobs[0] === "audit");
  const models = Object.fromEntries(
    [...group(requests, (p) => p.blobs[2] || undefined)].map(([model, list]) => [model, tierFigures(list)]),
  );
  const latency = Object.fromEntries(
    [...group(requests, (p) => (p.blobs[0] === "error" ? undefined : p.blobs[4]!))].map(([colo, list]) => {
      const values = list.map((p) => ({ value: p.doubles[0]!, weight: p.sampleInterval }));
      return [
        colo,
        {
          requests: values.reduce((s, v) => s + v.weight, 0),
          p95Ms: weightedQuantile(values, 0.95),
          p99Ms: weightedQuantile(values, 0.99),
        },
      ];
    }),
  );
  const auditFigures = Object.fromEntries(
    [...group(audits, (p) => p.blobs[2] || undefined)].map(([model, list]) => {
      let rows = 0;
      let agreeing = 0;
      let failed = 0;
      for (const p of list) {
        if (p.blobs[8] === "failed") failed += p.sampleInterval;
        else {
          rows += p.doubles[3]! * p.sampleInterval;
          agreeing += p.doubles[4]! * p.sampleInterval;
        }
      }
      const interval = rows > 0 ? wilson(agreeing, rows) : null;
      return [
        model,
        {
          rows,
          agreeing,
          failed,
          agreement: interval ? interval.share : null,
          interval: interval ? { lower: interval.lower, upper: interval.upper } : null,
        },
      ];
    }),
  );
  const drift: EdgeFigures["drift"] = {};
  const answered = requests.filter((p) => p.blobs[0] !== "error" && p.blobs[8] !== "");
  for (const [key, list] of group(answered, (p) => `${p.blobs[2]}\u0000${p.blobs[3]}`)) {
    const [model, version] = key.split("\u0000") as [string, string];
    const baseline = baselines[model];
    const heldout = baseline?.versions[version] ?? baseline?.fallback;
    if (!baseline || !heldout) continue;
    const counts = new Array<number>(baseline.labels.length).fill(0);
    const confidence = Object.fromEntries(CONFIDENCE_BUCKETS.map((le) => [String(le), 0]));
    for (const p of list) {
      const c = baseline.labels.indexOf(p.blobs[8]!);
      if (c >= 0) counts[c]! += p.sampleInterval;
      const top = p.doubles[5]!;
      if (top >= 0) confidence[String(CONFIDENCE_BUCKETS[confidenceBucket(top)])]! += p.sampleInterval;
    }
    drift[model] ??= {};
    drift[model][version] = { ...driftOf(counts, shares(heldout)), confidence };
  }
  return { points: points.length, models, latency, audits: auditFigures, drift };
}
