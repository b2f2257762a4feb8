import { defaultTextMapGetter, ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { nowUs } from "../clock.ts";
import type { Executed } from "../executor.ts";
import type { TraceSamplerName } from "../options/tracing.ts";
import type { SpanSink } from "./span-writer.ts";
import { epochUs, type RequestEnd, runRecord } from "./trace-record.ts";
import type { TracingConfig } from "./tracing-config.ts";

/**
 * One request that may be traced, from its arrival to its answer: the caller's context and what answering
 * learnt along the way (regional/inference-answers.ts fills in the model, version and the run's timings). Its
 * spans are made after it ends, on the span thread, with the times recorded here, so a request whose context is
 * not sampled costs the reading of two headers and a sampler's decision, and nothing on the batcher's path.
 */
export class RequestTrace {
  /** The caller's context (`traceparent`/`tracestate`) when it has one that counts, else undefined: a root. */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
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

  constructor(traceparent: string | undefined, tracestate: string | undefined, receivedUs: number) {
    this.traceparent = traceparent;
    this.tracestate = tracestate;
    this.receivedUs = receivedUs;
  }
}

/**
 * The pool's tracing. `begin` is all a request pays when it is not traced: undefined when tracing is off or the
 * caller marked its context unsampled (and the sampler follows parents); the transport then carries nothing.
 */
export interface RequestTracing {
  readonly enabled: boolean;
  begin(traceparent: string | undefined, tracestate: string | undefined, receivedUs: number): RequestTrace | undefined;
  /** Hand the request to be made spans of (if its context is sampled) and exported. */
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
 * OTEL_TRACES_SAMPLER as a draw for requests without a parent, made before anything is built. A root request the
 * draw drops then costs one `Math.random()`: measured, letting OpenTelemetry's TraceIdRatioBased sampler drop it
 * (a trace id, a span id, a non-recording span, contexts) cost the pool several percent of its throughput at 1%.
 * A ratio drawn on a root is the trace-id ratio's distribution; its consistency across services matters only
 * below a parent, where the SDK's samplers still decide (regional/tracing/span-writer.ts).
 */
function rootDrawOf(name: TraceSamplerName, ratio: number): () => boolean {
  const own = name.startsWith("parentbased_") ? name.slice("parentbased_".length) : name;
  return own === "always_on" ? () => true : own === "always_off" ? () => false : () => Math.random() < ratio;
}

/**
 * The pool's tracing: which requests may be traced (`begin`, on the request's path), and each traced request,
 * once it has ended, as a plain record to `sink`, which makes and exports its spans: in the pool, the span
 * thread (regional/tracing/span-thread.ts), so that the event loop pays a record per traced request and nothing
 * of OpenTelemetry's span building, serialisation or HTTP.
 */
export function createRequestTracing(config: TracingConfig, sink: SpanSink): RequestTracing {
  const parentBased = config.sampler.startsWith("parentbased_");
  const rootDraw = rootDrawOf(config.sampler, config.ratio);
  const propagator = new W3CTraceContextPropagator();

  return {
    enabled: true,
    begin(traceparent, tracestate, receivedUs) {
      if (traceparent === undefined) return rootDraw() ? new RequestTrace(undefined, undefined, receivedUs) : undefined;
      // A parent-based sampler records nothing under a parent marked unsampled: a version-00 traceparent ending
      // in flags 00 is dropped before it is parsed (the edge sends one with every request it does not sample).
      if (parentBased && traceparent.length === 55 && traceparent.startsWith("00-") && traceparent.endsWith("-00")) {
        return undefined;
      }
      const caller = trace.getSpanContext(
        propagator.extract(ROOT_CONTEXT, { traceparent, tracestate }, defaultTextMapGetter),
      );
      // A malformed traceparent is no parent (W3C Trace Context): the request is a root.
      if (!caller) return rootDraw() ? new RequestTrace(undefined, undefined, receivedUs) : undefined;
      if (parentBased && (caller.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      return new RequestTrace(traceparent, tracestate, receivedUs);
    },

    end(request, ended) {
      sink.write({
        traceparent: request.traceparent,
        tracestate: request.tracestate,
        receivedUs: epochUs(request.receivedUs),
        endedUs: epochUs(nowUs()),
        model: request.model,
        version: request.version,
        requestId: request.requestId,
        rows: request.rows,
        audit: request.audit,
        run: request.run && runRecord(request.run),
        end: ended,
      });
    },

    flush: () => sink.flush(),
    shutdown: () => sink.shutdown(),
  };
}
