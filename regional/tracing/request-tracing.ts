import {
  type Context,
  defaultTextMapGetter,
  type HrTime,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
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
import { nowUs } from "../clock.ts";
import type { Executed } from "../executor.ts";
import type { TraceSamplerName } from "../options/tracing.ts";
import { SERVER_NAME, SERVER_VERSION } from "../server-info.ts";
import type { TracingConfig } from "./tracing-config.ts";

/**
 * One request that may be traced, from its arrival to its answer: the caller's context and what answering
 * learnt along the way (regional/inference-answers.ts fills in the model, version and the run's timings). Its
 * spans are made when it ends, with the times recorded here, so a request whose context is not sampled costs
 * the reading of two headers and a sampler's decision, and nothing on the batcher's path.
 */
export class RequestTrace {
  /** The caller's context (`traceparent`/`tracestate`), or the root context without one. */
  readonly parent: Context;
  /** When the pool received the request, on the `nowUs` clock. */
  readonly receivedUs: number;
  // Every field set here, so that a trace has one shape from its start (the hot path reads it per request).
  model: string | undefined = undefined;
  version: string | undefined = undefined;
  /** The request's own `id`, when it sent one (Triton's `triton.request_id`). */
  requestId: string | undefined = undefined;
  rows: number | undefined = undefined;
  /** Its run in the batcher: queue wait, batch and inference timings. */
  run: Executed | undefined = undefined;
  /** An audit (an edge answer re-asked, docs/observability.md), not a client's request. */
  audit = false;

  constructor(parent: Context, receivedUs: number) {
    this.parent = parent;
    this.receivedUs = receivedUs;
  }
}

/** How a traced request ended, as its transport saw it. */
export type RequestEnd =
  | { protocol: "http"; method: string; route: string; status: number; error?: { code: string; message: string } }
  | { protocol: "grpc"; method: string; code: string; error?: { code: string; message: string } };

/**
 * The pool's tracing. `begin` is all a request pays when it is not traced: undefined when tracing is off or the
 * caller marked its context unsampled (and the sampler follows parents); the transport then carries nothing.
 */
export interface RequestTracing {
  readonly enabled: boolean;
  begin(traceparent: string | undefined, tracestate: string | undefined, receivedUs: number): RequestTrace | undefined;
  /** Make the request's spans (if its context is sampled) and hand them to the exporter. */
  end(trace: RequestTrace, ended: RequestEnd): void;
  /** Export what is finished now (tests, shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** No tracing: nothing is read, nothing is made. */
export const TRACING_OFF: RequestTracing = {
  enabled: false,
  begin: () => undefined,
  end: () => {},
  flush: async () => {},
  shutdown: async () => {},
};

/**
 * OTEL_TRACES_SAMPLER as a draw for requests without a parent, made before anything is built (`rootDraw`), and
 * OpenTelemetry's sampler for the spans: it records every root `begin` let through and decides requests with a
 * parent as the named sampler does (parent-based: the caller's flag; the others: their own rule). A root request
 * the draw drops then costs one `Math.random()`: measured, letting OpenTelemetry's TraceIdRatioBased sampler drop
 * it (a trace id, a span id, a non-recording span, contexts) cost the pool several percent of its throughput at
 * 1%. A ratio drawn on a root is the trace-id ratio's distribution; its consistency across services matters only
 * below a parent, where the SDK's samplers still decide.
 */
function samplerFor(
  name: TraceSamplerName,
  ratio: number,
): { sampler: Sampler; parentBased: boolean; rootDraw: () => boolean } {
  const parentBased = name.startsWith("parentbased_");
  const own = parentBased ? name.slice("parentbased_".length) : name;
  const rootDraw = own === "always_on" ? () => true : own === "always_off" ? () => false : () => Math.random() < ratio;
  const withParent = parentBased
    ? new ParentBasedSampler({ root: new AlwaysOnSampler() })
    : own === "always_on"
      ? new AlwaysOnSampler()
      : own === "always_off"
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  return { sampler: new DrawnRootSampler(withParent), parentBased, rootDraw };
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

/** Where the `nowUs` clock starts, in microseconds since the epoch. */
const ORIGIN_US = performance.timeOrigin * 1000;

/**
 * A `nowUs` time as OpenTelemetry's `[seconds, nanoseconds]` since the epoch. Given as numbers, the SDK shifts
 * each span by its own reading of the clocks' offset, and a queue span would not end where its batch begins.
 */
function otelTime(us: number): HrTime {
  const total = ORIGIN_US + us;
  const seconds = Math.floor(total / 1e6);
  return [seconds, Math.round((total - seconds * 1e6) * 1000)];
}

/**
 * Tracing with OpenTelemetry's JS SDK, manual spans only (no auto-instrumentation: public measurements put
 * HTTP auto-instrumentation at 30-80% of a small handler's cost): per traced request a server span (Triton's
 * `triton.model_name`, `triton.model_version`, `triton.request_id`), and under it the queue wait, the batch it ran
 * in (its rows and requests) and that batch's inference (`compute`, Triton's name), exported over OTLP/HTTP as
 * protobuf by a batch span processor (another `exporter` in tests). Nothing is registered globally: a pool's
 * provider is its own, so two pools in one process (tests) trace apart.
 */
export function createRequestTracing(
  config: TracingConfig,
  region: string,
  exporter: SpanExporter = new OTLPTraceExporter({ url: config.url }),
): RequestTracing {
  const { sampler, parentBased, rootDraw } = samplerFor(config.sampler, config.ratio);
  const provider = new TracerProvider({
    sampler,
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
    enabled: true,
    begin(traceparent, tracestate, receivedUs) {
      if (traceparent === undefined) return rootDraw() ? new RequestTrace(ROOT_CONTEXT, receivedUs) : undefined;
      // A parent-based sampler records nothing under a parent marked unsampled: a version-00 traceparent ending
      // in flags 00 is dropped before it is parsed (the edge sends one with every request it does not sample).
      if (parentBased && traceparent.length === 55 && traceparent.startsWith("00-") && traceparent.endsWith("-00")) {
        return undefined;
      }
      const parent = propagator.extract(ROOT_CONTEXT, { traceparent, tracestate }, defaultTextMapGetter);
      const caller = trace.getSpanContext(parent);
      // A malformed traceparent is no parent (W3C Trace Context): the request is a root.
      if (!caller) return rootDraw() ? new RequestTrace(ROOT_CONTEXT, receivedUs) : undefined;
      if (parentBased && (caller.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      return new RequestTrace(parent, receivedUs);
    },

    end(request, ended) {
      const name =
        ended.protocol === "http" ? `${ended.method} ${ended.route}` : `inference.GRPCInferenceService/${ended.method}`;
      // Sampled first, attributes after: a request the sampler drops costs the decision and nothing more.
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.SERVER, startTime: otelTime(request.receivedUs) },
        request.parent,
      );
      if (!span.isRecording()) return;
      const model = request.model === undefined ? {} : { "triton.model_name": request.model };
      const version = request.version === undefined ? {} : { "triton.model_version": request.version };
      span.setAttributes({
        ...model,
        ...version,
        ...(request.requestId === undefined ? {} : { "triton.request_id": request.requestId }),
        ...(request.rows === undefined ? {} : { "edgecascade.rows": request.rows }),
        ...(request.audit ? { "edgecascade.audit": true } : {}),
        ...(ended.protocol === "http"
          ? {
              "http.request.method": ended.method,
              "http.route": ended.route,
              "http.response.status_code": ended.status,
            }
          : {
              "rpc.system": "grpc",
              "rpc.service": "inference.GRPCInferenceService",
              "rpc.method": ended.method,
              "rpc.grpc.status_code": ended.code,
            }),
      });
      const run = request.run;
      if (run) {
        const inRequest = trace.setSpan(request.parent, span);
        const queuedUs = run.batchStartUs - run.queueMs * 1000;
        tracer
          .startSpan("queue", { startTime: otelTime(queuedUs), attributes: { ...model, ...version } }, inRequest)
          .end(otelTime(run.batchStartUs));
        const batch = tracer.startSpan(
          "batch",
          {
            startTime: otelTime(run.batchStartUs),
            attributes: { "edgecascade.batch.rows": run.batchRows, "edgecascade.batch.requests": run.batchRequests },
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
      if (ended.error) {
        span.setAttribute("error.type", ended.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: ended.error.message });
      }
      span.end(otelTime(nowUs()));
    },

    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
