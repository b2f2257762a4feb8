import { topClass } from "../../protocol/responses.ts";
import { requestDataPoint, type Tier } from "../analytics/data-point.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { EdgeRuntime } from "../runtime.ts";
import type { Served } from "../serve.ts";
import type { RequestFacts } from "./request-facts.ts";

const tierOf = (served: Served): Tier =>
  served.servedBy.startsWith("regional:") ? "regional" : (served.servedBy as Exclude<Tier, "regional" | "error">);

/**
 * An answered request's data point (edge/analytics/data-point.ts): who answered, why degraded, the colo, the
 * region, the tenant, the first row's label and confidence (drift), the edge variant's decisive confidence, the
 * time the Worker saw and the region's. `writeDataPoint` does not wait: the point is sent after the invocation.
 */
export function recordAnswer(
  rt: EdgeRuntime,
  model: ServedModel,
  tenant: string,
  served: Served,
  facts: RequestFacts,
): void {
  const analytics = rt.analytics;
  if (!analytics) return;
  const top = topClass(served.probs, 0, model.io.classes);
  const { regional, edgeTop, tried } = served.trace;
  analytics.writeDataPoint(
    requestDataPoint({
      tier: tierOf(served),
      degraded: served.degraded,
      model: model.name,
      version: served.version,
      colo: facts.colo(),
      region: regional?.region ?? tried,
      tenant,
      status: 200,
      label: model.io.labels[top.index] ?? String(top.index),
      traceId: facts.trace.traceId,
      latencyMs: Date.now() - facts.startedAt,
      edgeTop,
      regionMs: regional?.ms,
      rows: served.batch,
      confidence: top.confidence,
    }),
  );
}

/** A refused or failed request's data point: its status, and its model and tenant when they were known. */
export function recordError(
  rt: EdgeRuntime | undefined,
  error: { model: string | undefined; tenant: string | undefined; status: number },
  facts: RequestFacts | undefined,
): void {
  const analytics = rt?.analytics;
  if (!analytics || !facts) return;
  analytics.writeDataPoint(
    requestDataPoint({
      tier: "error",
      model: error.model !== undefined && rt.models.get(error.model) ? error.model : undefined,
      colo: facts.colo(),
      tenant: error.tenant ?? "",
      status: error.status,
      traceId: facts.trace.traceId,
      latencyMs: Date.now() - facts.startedAt,
      rows: 0,
    }),
  );
}
