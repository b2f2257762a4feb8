import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";

/** An http(s) URL. */
function httpUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new UsageError(`must be an http(s) URL, got "${raw}"`);
  }
  return raw.trim();
}

/** OTEL_TRACES_SAMPLER's values the pool takes (OpenTelemetry's names). */
export const TRACE_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** OpenTelemetry tracing (regional/tracing/), from OpenTelemetry's own variables. */
export const TRACING_OPTIONS = defineTable({
  // Tracing (regional/tracing/): OpenTelemetry's own variables, read as its SDKs read them; environment only.
  // The OTLP exporter itself also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION and the certificate
  // variables (docs/observability.md).
  /** OTLP/HTTP base URL; traces go to `<url>/v1/traces` as protobuf. Unset, with the next unset: no tracing. */
  otlpEndpoint: {
    flag: false,
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    type: "parsed",
    placeholder: "URL",
    defaultText: "unset",
    help: "OTLP/HTTP collector; spans go to URL/v1/traces (protobuf). Unset, and no traces URL either: no tracing",
    parse: httpUrl,
  },
  /** The traces URL itself, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  otlpTracesEndpoint: {
    flag: false,
    env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    type: "parsed",
    placeholder: "URL",
    defaultText: "unset",
    help: "OTLP/HTTP traces URL, used as given (wins over the collector URL above)",
    parse: httpUrl,
  },
  /** `none` turns tracing off whatever the endpoint says. */
  tracesExporter: {
    flag: false,
    env: "OTEL_TRACES_EXPORTER",
    type: "string",
    choices: ["otlp", "none"] as const,
    default: "otlp",
    help: "none: no tracing, whatever the endpoint",
  },
  /**
   * Which requests are traced. The parent-based ones follow a caller's sampled flag (the edge's `traceparent`)
   * and apply the rest to requests without one. Default `parentbased_always_on`, OpenTelemetry's.
   */
  tracesSampler: {
    flag: false,
    env: "OTEL_TRACES_SAMPLER",
    type: "string",
    choices: TRACE_SAMPLERS,
    default: "parentbased_always_on",
    placeholder: "NAME",
    help: "which requests are traced; parentbased_* follow the caller's sampled flag",
  },
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  tracesSamplerArg: {
    flag: false,
    env: "OTEL_TRACES_SAMPLER_ARG",
    type: "number",
    min: 0,
    max: 1,
    default: 1,
    placeholder: "RATIO",
    help: "ratio of the traceidratio samplers (requests without a parent, for parentbased_traceidratio)",
  },
  /** `service.name` of the spans. */
  serviceName: {
    flag: false,
    env: "OTEL_SERVICE_NAME",
    type: "string",
    default: "edgecascade-regional",
    placeholder: "NAME",
    help: "service.name of the pool's spans",
  },
  /** `true` turns tracing off. */
  sdkDisabled: {
    flag: false,
    env: "OTEL_SDK_DISABLED",
    type: "boolean",
    help: "true: no tracing",
  },
  /** How long finished spans wait to be exported together (the batch span processor's delay). */
  spanExportDelayMs: {
    flag: false,
    env: "OTEL_BSP_SCHEDULE_DELAY",
    type: "number",
    integer: true,
    min: 1,
    max: 600_000,
    default: 5000,
    placeholder: "MS",
    unit: "ms",
    help: "longest a finished span waits before it is exported with others",
  },
  /** Finished spans kept while the collector is slow; more are dropped (never waited for). */
  spanQueueSize: {
    flag: false,
    env: "OTEL_BSP_MAX_QUEUE_SIZE",
    type: "number",
    integer: true,
    min: 1,
    max: 1_000_000,
    default: 2048,
    placeholder: "N",
    help: "finished spans kept for export; more are dropped, never waited for",
  },
});
