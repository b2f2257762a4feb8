import type { TraceSamplerName } from "../options/tracing.ts";
import type { RegionalOptions } from "../options.ts";

/** Where and how the pool exports its spans. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (protobuf). */
  url: string;
  sampler: TraceSamplerName;
  /** The `traceidratio` samplers' ratio. */
  ratio: number;
  serviceName: string;
  exportDelayMs: number;
  queueSize: number;
}

export type TracingOptions = Pick<
  RegionalOptions,
  | "otlpEndpoint"
  | "otlpTracesEndpoint"
  | "tracesExporter"
  | "tracesSampler"
  | "tracesSamplerArg"
  | "serviceName"
  | "sdkDisabled"
  | "spanExportDelayMs"
  | "spanQueueSize"
>;

/**
 * Tracing as the standard OTEL_* variables configure it, or why it is off: it is on only with a collector to
 * send to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT plus `v1/traces` as the spec
 * joins them), and not turned off by OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none.
 */
export function tracingConfig(o: TracingOptions): { on: true; config: TracingConfig } | { on: false; reason: string } {
  if (o.sdkDisabled) return { on: false, reason: "OTEL_SDK_DISABLED=true" };
  if (o.tracesExporter === "none") return { on: false, reason: "OTEL_TRACES_EXPORTER=none" };
  const url =
    o.otlpTracesEndpoint ??
    (o.otlpEndpoint === undefined ? undefined : `${o.otlpEndpoint.replace(/\/*$/, "")}/v1/traces`);
  if (url === undefined) {
    return { on: false, reason: "no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" };
  }
  return {
    on: true,
    config: {
      url,
      sampler: o.tracesSampler,
      ratio: o.tracesSamplerArg,
      serviceName: o.serviceName,
      exportDelayMs: o.spanExportDelayMs,
      queueSize: o.spanQueueSize,
    },
  };
}
