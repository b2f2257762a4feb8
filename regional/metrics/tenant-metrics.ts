import { Gauge, type Registry } from "prom-client";
import { type Cell, DeferredHistogram, deferredCounter, getOrMake } from "../deferred-metrics.ts";
import type { TenantOutcome, TenantRecorder } from "../recorder.ts";

/** Per tenant (docs/regional.md, Tenants): requests by outcome, rows in and over the reservation, latency. */
export function tenantMetrics(
  common: { registers: Registry[] },
  /** The registry of the request path's histograms (read as JSON, deferred-metrics.ts). */
  histograms: Registry,
  buckets: number[],
): (tenant: string, tenantClass: string, reservedRowsPerS: number) => TenantRecorder {
  // Per tenant: the configuration's tenants plus `direct` and `other`, so the label set is as small as it is.
  const tenantRequests = deferredCounter({
    name: "edgecascade_tenant_requests_total",
    help: "Inference requests per tenant (the edge's, signed on the forward; direct: no tenant, e.g. gRPC), by outcome: success, shed (best-effort refused first), overloaded, rejected, expired, failed.",
    labelNames: ["tenant", "outcome"],
    ...common,
  });
  const tenantRows = deferredCounter({
    name: "edgecascade_tenant_rows_total",
    help: "Rows run per tenant, within its reservation (reserved) or as best-effort.",
    labelNames: ["tenant", "share"],
    ...common,
  });
  const tenantDuration = new DeferredHistogram({
    name: "edgecascade_tenant_request_duration_seconds",
    help: "Time from receiving a tenant's inference request to its answer being ready (requests that reached a model).",
    buckets,
    labelNames: ["tenant"],
    registers: [histograms],
  });
  // The configuration, per tenant: every worker has the same, so a cluster reports it once.
  const tenantReservation = new Gauge({
    name: "edgecascade_tenant_reserved_rows_per_second",
    help: "Rows per second reserved for a tenant (0 for best-effort), by class: compare with rate(edgecascade_tenant_rows_total[1m]).",
    labelNames: ["tenant", "class"],
    aggregator: "max",
    ...common,
  });
  return (tenant, tenantClass, reservedRowsPerS) => {
    tenantReservation.set({ tenant, class: tenantClass }, reservedRowsPerS);
    const outcomes = new Map<TenantOutcome, Cell>();
    const outcome = (o: TenantOutcome) => getOrMake(outcomes, o, () => tenantRequests({ tenant, outcome: o }));
    const reserved = tenantRows({ tenant, share: "reserved" });
    const bestEffort = tenantRows({ tenant, share: "best-effort" });
    const duration = tenantDuration.cell({ tenant });
    return {
      request(o, seconds) {
        outcome(o).value += 1;
        if (seconds !== undefined) duration.observe(seconds);
      },
      rows(n, inReservation) {
        (inReservation ? reserved : bestEffort).value += n;
      },
    };
  };
}
