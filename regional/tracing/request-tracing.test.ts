import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import type { TraceSamplerName } from "../options/tracing.ts";
import { createRequestTracing } from "./request-tracing.ts";
import { createSpanWriter } from "./span-writer.ts";

const SAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const UNSAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
const END = { protocol: "http", method: "POST", route: "/v1/classify", status: 200 } as const;

/** How many requests of `traceparent` get spans (each a request span alone: no run recorded), of `n`. */
async function traced(sampler: TraceSamplerName, ratio: number, traceparent: string | undefined, n = 200) {
  const exporter = new InMemorySpanExporter();
  const config = { url: "http://unused", sampler, ratio, serviceName: "t", exportDelayMs: 60_000, queueSize: 10_000 };
  const tracing = createRequestTracing(config, createSpanWriter(config, "eu", exporter));
  let begun = 0;
  for (let i = 0; i < n; i++) {
    const trace = tracing.begin(traceparent, undefined, performance.now() * 1000);
    if (!trace) continue;
    begun++;
    tracing.end(trace, END);
  }
  await tracing.flush();
  const spans = exporter.getFinishedSpans();
  await tracing.shutdown();
  return { begun, spans: spans.length, traceIds: new Set(spans.map((s) => s.spanContext().traceId)) };
}

describe("the pool's sampling", () => {
  it("parent-based: the caller's flag decides, and unsampled parents are dropped before anything is built", async () => {
    expect(await traced("parentbased_traceidratio", 0, SAMPLED)).toMatchObject({ begun: 200, spans: 200 });
    expect(await traced("parentbased_always_on", 1, UNSAMPLED)).toMatchObject({ begun: 0, spans: 0 });
    const continued = await traced("parentbased_always_on", 1, SAMPLED, 1);
    expect([...continued.traceIds]).toEqual(["4bf92f3577b34da6a3ce929d0e0e4736"]);
  });

  it("requests without a parent are drawn at the configured ratio", async () => {
    expect(await traced("parentbased_traceidratio", 0, undefined)).toMatchObject({ begun: 0, spans: 0 });
    expect(await traced("parentbased_traceidratio", 1, undefined)).toMatchObject({ begun: 200, spans: 200 });
    const half = await traced("parentbased_traceidratio", 0.5, undefined, 2000);
    expect(half.spans).toBe(half.begun);
    expect(half.spans).toBeGreaterThan(850);
    expect(half.spans).toBeLessThan(1150);
    expect(half.traceIds.size).toBe(half.spans); // each its own trace
    expect(await traced("parentbased_always_off", 1, undefined)).toMatchObject({ spans: 0 });
  });

  it("a malformed traceparent is no parent: the request is a root, drawn as one", async () => {
    expect(await traced("parentbased_always_on", 1, "00-nothex-00")).toMatchObject({ spans: 200 });
    expect(await traced("parentbased_traceidratio", 0, "garbage")).toMatchObject({ spans: 0 });
  });

  it("samplers that are not parent-based decide by their own rule, whatever the caller's flag", async () => {
    expect(await traced("traceidratio", 0, SAMPLED)).toMatchObject({ spans: 0 });
    expect(await traced("always_on", 1, UNSAMPLED)).toMatchObject({ spans: 200 });
    expect(await traced("always_off", 1, SAMPLED)).toMatchObject({ spans: 0 });
  });
});
