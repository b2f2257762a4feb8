/**
 * The edge's own numbers in Workers Analytics Engine (docs/observability.md): one data point per classify or
 * infer request, and one per audit, in the layout of layout.ts.
 */

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
