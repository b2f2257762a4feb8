import {
  checkTraceState,
  formatTraceParent,
  parseTraceParent,
  type TraceParent,
  withSampled,
} from "../../protocol/trace-context.ts";

/** Where a request's trace context came from. */
export type TraceOrigin = "client" | "platform" | "edge";

/** The trace a request belongs to, as the edge forwards it and names it in its answer. */
export interface EdgeTrace extends TraceParent {
  /** The client's `tracestate`, passed on when well formed and the trace is the client's. */
  tracestate?: string;
  origin: TraceOrigin;
}

/** A span context as Workers tracing gives it (`ctx.tracing.getActiveSpan().spanContext()`). */
export interface PlatformSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export interface TraceSources {
  /** The request's `traceparent` and `tracestate` headers. */
  traceparent: string | null | undefined;
  tracestate: string | null | undefined;
  /** The Worker's own span, where the platform traces this request (asked only without a client context). */
  platform: () => PlatformSpanContext | undefined;
  /** A new trace id and span id, for a trace the Worker starts. */
  newIds: () => { traceId: string; spanId: string };
  /** Whether a trace the Worker starts is sampled (TRACE_SAMPLE_RATIO). */
  sample: () => boolean;
}

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** A platform span context worth continuing: well-formed ids, not the all-zero one of an untraced request. */
function validPlatform(span: PlatformSpanContext | undefined): span is PlatformSpanContext {
  return (
    span !== undefined &&
    HEX_TRACE.test(span.traceId) &&
    span.traceId !== ZERO_TRACE &&
    HEX_SPAN.test(span.spanId) &&
    span.spanId !== ZERO_SPAN &&
    Number.isInteger(span.traceFlags)
  );
}

/**
 * The trace a request's forward carries (W3C Trace Context) and its answer names:
 * 1. the client's, when it sent a valid `traceparent`: its trace id, its span as the parent, its flags (the
 *    sampled flag is the caller's decision) and its `tracestate` if well formed. The Worker's own spans are in
 *    Cloudflare's trace, which does not continue an incoming `traceparent`, so the edge passes the client's span on
 *    as the pool's parent rather than invent one the client's trace never sees;
 * 2. else the Worker's own span, where Workers tracing traces this request (`[observability.traces]`): the pool's
 *    spans then sit under the Worker's in one trace, and it is sampled as the platform decided;
 * 3. else a trace the Worker starts, sampled at TRACE_SAMPLE_RATIO.
 */
export function requestTrace(sources: TraceSources): EdgeTrace {
  const client = parseTraceParent(sources.traceparent);
  if (client) {
    const tracestate = checkTraceState(sources.tracestate);
    return { ...client, ...(tracestate ? { tracestate } : {}), origin: "client" };
  }
  const platform = sources.platform();
  if (validPlatform(platform)) {
    return {
      traceId: platform.traceId,
      parentId: platform.spanId,
      flags: platform.traceFlags & 0xff,
      origin: "platform",
    };
  }
  const { traceId, spanId } = sources.newIds();
  return { traceId, parentId: spanId, flags: withSampled(0, sources.sample()), origin: "edge" };
}

/** The headers that carry the trace to a region. */
export function traceHeaders(trace: EdgeTrace): Record<string, string> {
  const traceparent = formatTraceParent(trace);
  return trace.tracestate ? { traceparent, tracestate: trace.tracestate } : { traceparent };
}

/**
 * The answer's Server-Timing entry naming the trace: `traceparent;desc="00-<trace id>-<span id>-<flags>"`, the
 * convention browsers' RUM agents (OpenTelemetry's document-load instrumentation among them) read.
 */
export function traceTimingEntry(trace: EdgeTrace): string {
  return `traceparent;desc="${formatTraceParent(trace)}"`;
}
