import { Counter, type Registry } from "prom-client";
import type { TracingRecorder } from "../recorder.ts";

/** The span thread's losses (regional/tracing/span-thread.ts): what an operator needs to trust a missing trace. */
export function tracingMetrics(common: { registers: Registry[] }): TracingRecorder {
  const dropped = new Counter({
    name: "edgecascade_tracing_requests_dropped_total",
    help: "Traced requests dropped before they became spans: the span thread was behind by more than OTEL_BSP_MAX_QUEUE_SIZE (logged at most every 10 s with the count).",
    ...common,
  });
  const failedExports = new Counter({
    name: "edgecascade_tracing_export_failures_total",
    help: "Span exports the collector refused or that could not be sent (their spans are lost; logged at most every 10 s with the status or socket error).",
    ...common,
  });
  return {
    dropped: (requests) => dropped.inc(requests),
    exportFailed: () => failedExports.inc(),
  };
}
