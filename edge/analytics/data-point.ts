/**
 * The edge's own numbers in Workers Analytics Engine (docs/observability.md): one data point per classify or
 * infer request, and one per audit. The layout below is the one the docs' SQL, the Grafana dashboard
 * (tools/dashboards/) and the local figures (figures.ts) read: change it only with them.
 */

/** What a data point's blobs hold, in order (blob1 ... blob10). */
export const BLOBS = [
  "tier", // cache, edge, regional, degraded, error; audit for an audit's point
  "degraded", // why a degraded answer is degraded (regions-failed, too-far, ...), else ""
  "model", // the logical model, "" when the request named none the edge serves
  "version", // the model version answered (an audit: the region's)
  "colo", // request.cf.colo, "" locally
  "region", // the region that answered, else the first one tried (an audit: the region asked), else ""
  "tenant", // the API key's tenant, anonymous without keys
  "status", // the HTTP status of the answer (an audit: the region's, or "failed")
  "class", // the predicted label of the first row ("" for errors); an audit: agree, disagree or failed
  "trace", // the trace id the answer names (Server-Timing traceparent)
] as const;

/** What a data point's doubles hold, in order (double1 ... double6). */
export const DOUBLES = [
  "latency_ms", // arrival to answer as the Worker's clock sees it (it stands still between I/O: an edge answer reads 0)
  "edge_top", // the edge variant's lowest top probability over the rows (what the cascade decided on); -1 when it did not run
  "region_ms", // the region's answer time (an audit: its call), 0 when no region answered
  "rows", // rows in the request (an audit: rows re-asked)
  "agreeing", // an audit's rows the region labelled as the edge did; 0 otherwise
  "confidence", // the answer's top probability of the first row (drift's confidence histogram); -1 for errors
] as const;

export type Tier = "cache" | "edge" | "regional" | "degraded" | "error";

/** One request as the data point records it. */
export interface RequestRecord {
  tier: Tier;
  degraded?: string;
  model?: string;
  version?: string;
  colo?: string;
  region?: string;
  tenant: string;
  status: number;
  /** Label of the first row's predicted class. */
  label?: string;
  traceId: string;
  latencyMs: number;
  edgeTop?: number;
  regionMs?: number;
  rows: number;
  /** The first row's top probability in the answer. */
  confidence?: number;
}

/** One audit as its data point records it. */
export interface AuditRecord {
  model: string;
  /** The region's version that answered ("" when it failed). */
  version: string;
  colo?: string;
  region: string;
  tenant: string;
  outcome: "agree" | "disagree" | "failed";
  status: string;
  traceId: string;
  regionMs: number;
  rows: number;
  agreeing: number;
}

/**
 * The index (Analytics Engine's sampling key): the model. Queries read by model (edge share, agreement, drift)
 * or across the few models (latency per colo), and Analytics Engine samples each index apart at write time, so a
 * busy model never thins out a quiet one. Audits get an index of their own (`<model>:audit`): a few per second
 * beside a model's thousands, they would otherwise be sampled with them.
 */
export const requestIndex = (model: string | undefined) => model ?? "";
export const auditIndex = (model: string) => `${model}:audit`;

export function requestDataPoint(r: RequestRecord): AnalyticsEngineDataPoint {
  return {
    indexes: [requestIndex(r.model)],
    blobs: [
      r.tier,
      r.degraded ?? "",
      r.model ?? "",
      r.version ?? "",
      r.colo ?? "",
      r.region ?? "",
      r.tenant,
      String(r.status),
      r.label ?? "",
      r.traceId,
    ],
    doubles: [r.latencyMs, r.edgeTop ?? -1, r.regionMs ?? 0, r.rows, 0, r.confidence ?? -1],
  };
}

export function auditDataPoint(a: AuditRecord): AnalyticsEngineDataPoint {
  return {
    indexes: [auditIndex(a.model)],
    blobs: ["audit", "", a.model, a.version, a.colo ?? "", a.region, a.tenant, a.status, a.outcome, a.traceId],
    doubles: [a.regionMs, -1, a.regionMs, a.rows, a.agreeing, -1],
  };
}
