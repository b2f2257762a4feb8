import { describe, expect, it } from "vitest";
import { parseTraceParent } from "../../protocol/trace-context.ts";
import { requestTrace, traceHeaders, traceTimingEntry } from "./trace-context.ts";
import { TraceIds } from "./trace-ids.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const PLATFORM = { traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 };
const sources = (overrides: Partial<Parameters<typeof requestTrace>[0]> = {}) => ({
  traceparent: undefined,
  tracestate: undefined,
  platform: () => undefined,
  newIds: () => ({ traceId: "c".repeat(32), spanId: "d".repeat(16) }),
  sample: () => true,
  ...overrides,
});

describe("requestTrace", () => {
  it("continues a client's valid traceparent, its flags and well-formed tracestate, before anything else", () => {
    let platformAsked = false;
    const trace = requestTrace(
      sources({
        traceparent: `00-${TRACE}-${SPAN}-00`,
        tracestate: "vendor=1",
        platform: () => {
          platformAsked = true;
          return PLATFORM;
        },
      }),
    );
    expect(trace).toEqual({ traceId: TRACE, parentId: SPAN, flags: 0, tracestate: "vendor=1", origin: "client" });
    expect(platformAsked).toBe(false);
    expect(traceHeaders(trace)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-00`, tracestate: "vendor=1" });
    const dropped = requestTrace(sources({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "Bad State" }));
    expect(traceHeaders(dropped)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01` });
  });

  it("without a valid client context, the Worker's own span when the platform traces the request", () => {
    const trace = requestTrace(sources({ traceparent: "garbage", platform: () => PLATFORM }));
    expect(trace).toEqual({ traceId: PLATFORM.traceId, parentId: PLATFORM.spanId, flags: 1, origin: "platform" });
  });

  it("an untraced request's all-zero span context (Miniflare, or not head-sampled) is no context", () => {
    const zero = { traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 };
    expect(requestTrace(sources({ platform: () => zero })).origin).toBe("edge");
  });

  it("else a trace the Worker starts, sampled as TRACE_SAMPLE_RATIO says", () => {
    const sampled = requestTrace(sources());
    expect(sampled).toEqual({ traceId: "c".repeat(32), parentId: "d".repeat(16), flags: 1, origin: "edge" });
    expect(requestTrace(sources({ sample: () => false })).flags).toBe(0);
  });

  it("names the trace in Server-Timing as a traceparent browsers' agents read", () => {
    const entry = traceTimingEntry(requestTrace(sources({ traceparent: `00-${TRACE}-${SPAN}-01` })));
    expect(entry).toBe(`traceparent;desc="00-${TRACE}-${SPAN}-01"`);
  });
});

describe("TraceIds", () => {
  it("gives valid, distinct ids, and isolates with other random prefixes never collide", () => {
    const ids = new TraceIds();
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const { traceId, spanId } = ids.next();
      expect(parseTraceParent(`00-${traceId}-${spanId}-01`), traceId).toBeDefined();
      seen.add(traceId);
    }
    expect(seen.size).toBe(1000);
    const fixed = (byte: number) => (n: number) => new Uint8Array(n).fill(byte);
    expect(new TraceIds(fixed(1)).next().traceId).not.toBe(new TraceIds(fixed(2)).next().traceId);
  });
});
