import { agreeingRows, formatAuditLabels } from "../../protocol/audit.ts";
import { topClass } from "../../protocol/responses.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import { auditDataPoint } from "../analytics/data-point.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { RequestFacts } from "../observe/request-facts.ts";
import { traceHeaders } from "../observe/trace-context.ts";
import { regionOrder } from "../regions/order.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { rowsJson, type Served } from "../serve.ts";

/**
 * The live agreement audit (docs/observability.md): a share of the answers the edge variant gave itself (the
 * cascade's choice, `Served.chosen`: not rows a client sent with `cascade: "edge"` that it would have forwarded) is
 * asked again of the nearest healthy region, with the edge's labels in `x-edgecascade-audit`; the region counts
 * per row whether its full model agrees (`edgecascade_cascade_audit_total`) and the edge writes the outcome to
 * Analytics Engine. The audit runs in `waitUntil`, after the answer has gone: it never delays one, its answer is
 * never cached, and neither the region's request metrics nor this isolate's request counts and region book
 * count it. Undefined when the answer is not drawn (AuditSampler) or no region is known.
 */
export function auditAnswer(
  rt: EdgeRuntime,
  model: ServedModel,
  tenant: string,
  served: Served,
  rows: InputRows,
  facts: RequestFacts,
): Promise<void> | undefined {
  const now = Date.now();
  if (served.servedBy !== "edge" || !served.chosen || !rt.auditSampler.take(now, rt.auditDraw())) return undefined;
  return ask(rt, model, tenant, served, rows, facts, now);
}

async function ask(
  rt: EdgeRuntime,
  model: ServedModel,
  tenant: string,
  served: Served,
  rows: InputRows,
  facts: RequestFacts,
  now: number,
): Promise<void> {
  const { classes } = model.io;
  const labels = Array.from({ length: served.batch }, (_, r) => topClass(served.probs, r, classes).index);
  const location = facts.locate();
  const [region] = regionOrder(rt.options.regions, location, rt.book.health(now, {}));
  if (!region) return;
  const record = { model: model.name, colo: facts.colo(), region: region.name, tenant, traceId: facts.trace.traceId };
  try {
    const answer = await rt.auditCall({
      region,
      path: "/v1/classify",
      body: rowsJson(model.name, undefined, rows),
      batch: rows.batch,
      classes,
      // The labels are signed with the call (forward/sign.ts), as a tenant is.
      audit: formatAuditLabels(labels),
      headers: traceHeaders(facts.trace),
      deadlineAt: now + rt.options.regionCheckTimeoutMs,
      location,
    });
    const agreeing = agreeingRows(answer.probs, labels, classes);
    rt.analytics?.writeDataPoint(
      auditDataPoint({
        ...record,
        version: answer.version,
        outcome: agreeing === labels.length ? "agree" : "disagree",
        status: "200",
        regionMs: answer.ms,
        rows: labels.length,
        agreeing,
      }),
    );
  } catch (err) {
    console.warn(`audit of ${model.name} at ${region.name} failed: ${(err as Error).message}`);
    rt.analytics?.writeDataPoint(
      auditDataPoint({
        ...record,
        version: "",
        outcome: "failed",
        status: "failed",
        regionMs: 0,
        rows: labels.length,
        agreeing: 0,
      }),
    );
  }
}
