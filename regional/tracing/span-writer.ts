import { defaultTextMapGetter, type HrTime, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { TraceSamplerName } from "../options/tracing.ts";
import { SERVER_NAME, SERVER_VERSION } from "../server-info.ts";
import type { TraceRecord } from "./trace-record.ts";
import type { TracingConfig } from "./tracing-config.ts";

/** Where traced requests go to become spans: a span writer here, or the span thread that runs one. */
export interface SpanSink {
  write(record: TraceRecord): void;
  /** Export what has been written. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry's sampler for the spans, for requests `begin` (regional/tracing/request-tracing.ts) let through:
 * it records every root (`begin` drew it already) and decides requests with a parent as the named sampler does
 * (parent-based: the caller's flag; the others: their own rule).
 */
function spanSampler(name: TraceSamplerName, ratio: number): Sampler {
  const own = name.startsWith("parentbased_") ? name.slice("parentbased_".length) : name;
  const withParent =
    own !== name
      ? new ParentBasedSampler({ root: new AlwaysOnSampler() })
      : own === "always_on"
        ? new AlwaysOnSampler()
        : own === "always_off"
          ? new AlwaysOffSampler()
          : new TraceIdRatioBasedSampler(ratio);
  return new DrawnRootSampler(withParent);
}

/** Records a root span (`begin` drew it already); below a parent, `withParent` decides. */
class DrawnRootSampler implements Sampler {
  readonly #withParent: Sampler;

  constructor(withParent: Sampler) {
    this.#withParent = withParent;
  }

  shouldSample(...args: Parameters<Sampler["shouldSample"]>): ReturnType<Sampler["shouldSample"]> {
    return trace.getSpanContext(args[0])
      ? this.#withParent.shouldSample(...args)
      : { decision: SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    return `DrawnRoot{${this.#withParent.toString()}}`;
  }
}

/**
 * Microseconds since the epoch as OpenTelemetry's `[seconds, nanoseconds]`. Given as numbers, the SDK shifts
 * each span by its own reading of the clocks' offset, and a queue span would not end where its batch begins.
 */
function otelTime(us: number): HrTime {
  const seconds = Math.floor(us / 1e6);
  return [seconds, Math.round((us - seconds * 1e6) * 1000)];
}

/**
 * Traced requests as spans with OpenTelemetry's JS SDK, manual spans only (no auto-instrumentation: public
 * measurements put HTTP auto-instrumentation at 30-80% of a small handler's cost): per request a server span
 * (Triton's `triton.model_name`, `triton.model_version`, `triton.request_id`), and under it the queue wait, the
 * batch it ran in (its rows and requests) and that batch's inference (`compute`, Triton's name), handed to
 * `exporter` by a batch span processor. Nothing is registered globally: a writer's provider is its own.
 */
export function createSpanWriter(
  config: Pick<TracingConfig, "sampler" | "ratio" | "serviceName" | "exportDelayMs" | "queueSize">,
  region: string,
  exporter: SpanExporter,
): SpanSink {
  const provider = new TracerProvider({
    sampler: spanSampler(config.sampler, config.ratio),
    resource: resourceFromAttributes({
      "service.name": config.serviceName,
      "service.version": SERVER_VERSION,
      "edgecascade.region": region,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.exportDelayMs,
        maxQueueSize: config.queueSize,
        maxExportBatchSize: Math.min(512, config.queueSize),
      }),
    ],
  });
  const tracer = provider.getTracer(SERVER_NAME, SERVER_VERSION);
  const propagator = new W3CTraceContextPropagator();

  return {
    write(request) {
      const { end } = request;
      const parent =
        request.traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(
              ROOT_CONTEXT,
              { traceparent: request.traceparent, tracestate: request.tracestate },
              defaultTextMapGetter,
            );
      const name =
        end.protocol === "http" ? `${end.method} ${end.route}` : `inference.GRPCInferenceService/${end.method}`;
      // Sampled first, attributes after: a request the sampler drops costs the decision and nothing more.
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: otelTime(request.receivedUs) }, parent);
      if (!span.isRecording()) return;
      const model = request.model === undefined ? {} : { "triton.model_name": request.model };
      const version = request.version === undefined ? {} : { "triton.model_version": request.version };
      span.setAttributes({
        ...model,
        ...version,
        ...(request.requestId === undefined ? {} : { "triton.request_id": request.requestId }),
        ...(request.rows === undefined ? {} : { "edgecascade.rows": request.rows }),
        ...(request.audit ? { "edgecascade.audit": true } : {}),
        ...(end.protocol === "http"
          ? {
              "http.request.method": end.method,
              "http.route": end.route,
              "http.response.status_code": end.status,
            }
          : {
              "rpc.system": "grpc",
              "rpc.service": "inference.GRPCInferenceService",
              "rpc.method": end.method,
              "rpc.grpc.status_code": end.code,
            }),
      });
      const run = request.run;
      if (run) {
        const inRequest = trace.setSpan(parent, span);
        tracer
          .startSpan("queue", { startTime: otelTime(run.queuedUs), attributes: { ...model, ...version } }, inRequest)
          .end(otelTime(run.batchStartUs));
        const batch = tracer.startSpan(
          "batch",
          {
            startTime: otelTime(run.batchStartUs),
            attributes: { "edgecascade.batch.rows": run.rows, "edgecascade.batch.requests": run.requests },
          },
          inRequest,
        );
        tracer
          .startSpan(
            "compute",
            { startTime: otelTime(run.runStartUs), attributes: { ...model, ...version } },
            trace.setSpan(inRequest, batch),
          )
          .end(otelTime(run.runEndUs));
        batch.end(otelTime(run.runEndUs));
      }
      if (end.error) {
        span.setAttribute("error.type", end.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: end.error.message });
      }
      span.end(otelTime(request.endedUs));
    },

    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
