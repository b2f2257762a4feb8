import { defineTable } from "../../tools/cli/table.ts";

/** Traces the Worker starts and the live agreement audit (docs/observability.md). */
export const OBSERVABILITY_SETTINGS = defineTable({
  traceSampleRatio: {
    env: "TRACE_SAMPLE_RATIO",
    type: "number",
    min: 0,
    max: 1,
    default: 0.01,
    help: "share of the traces the Worker starts itself that are sampled (the forward's traceparent flag)",
  },
  auditShare: {
    env: "AUDIT_SHARE",
    type: "number",
    min: 0,
    max: 1,
    default: 0.01,
    help: "share of edge answers re-asked of the nearest region off the request path (the live audit); 0 = none",
  },
  auditMaxPerSecond: {
    env: "AUDIT_MAX_PER_SECOND",
    type: "number",
    min: 0,
    default: 1,
    unit: "requests",
    help: "most audits one isolate sends per second",
  },
});
