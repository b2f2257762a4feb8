import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { createSpanWriter } from "./span-writer.ts";
import type { TraceRecord } from "./trace-record.ts";

const CONFIG = {
  sampler: "parentbased_always_on",
  ratio: 1,
  serviceName: "pool-eu",
  exportDelayMs: 60_000,
  queueSize: 100,
} as const;
const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const T0 = 1_800_000_000_000_000; // microseconds since the epoch

const record = (over: Partial<TraceRecord> = {}): TraceRecord => ({
  traceparent: PARENT,
  tracestate: "vendor=1",
  receivedUs: T0,
  endedUs: T0 + 900,
  model: "digits",
  version: "2",
  requestId: "r-1",
  rows: 1,
  audit: false,
  run: { queuedUs: T0 + 100, batchStartUs: T0 + 300, runStartUs: T0 + 350, runEndUs: T0 + 750, rows: 5, requests: 3 },
  end: { protocol: "http", method: "POST", route: "/v1/classify", status: 200 },
  ...over,
});

async function spansOf(...records: TraceRecord[]): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const writer = createSpanWriter(CONFIG, "eu", exporter);
  for (const r of records) writer.write(r);
  await writer.flush();
  const spans = exporter.getFinishedSpans();
  await writer.shutdown();
  return spans;
}

const us = (time: [number, number]) => time[0] * 1e6 + time[1] / 1000;

describe("a traced request as spans", () => {
  it("a request span under the caller's, with its queue wait, batch and inference, at the times recorded", async () => {
    const spans = await spansOf(record());
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(["POST /v1/classify", "batch", "compute", "queue"]);
    const request = byName["POST /v1/classify"]!;
    expect(request.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(request.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(request.spanContext().traceState?.get("vendor")).toBe("1");
    expect(request.attributes).toMatchObject({
      "triton.model_name": "digits",
      "triton.model_version": "2",
      "triton.request_id": "r-1",
      "edgecascade.rows": 1,
      "http.response.status_code": 200,
    });
    expect(request.resource.attributes).toMatchObject({ "service.name": "pool-eu", "edgecascade.region": "eu" });
    expect(byName.queue!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(byName.batch!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(byName.compute!.parentSpanContext?.spanId).toBe(byName.batch!.spanContext().spanId);
    expect(byName.batch!.attributes).toEqual({ "edgecascade.batch.rows": 5, "edgecascade.batch.requests": 3 });
    // The recorded times exactly: the queue wait ends where its batch begins.
    expect([us(request.startTime), us(request.endTime)]).toEqual([T0, T0 + 900]);
    expect([us(byName.queue!.startTime), us(byName.queue!.endTime)]).toEqual([T0 + 100, T0 + 300]);
    expect([us(byName.batch!.startTime), us(byName.batch!.endTime)]).toEqual([T0 + 300, T0 + 750]);
    expect([us(byName.compute!.startTime), us(byName.compute!.endTime)]).toEqual([T0 + 350, T0 + 750]);
  });

  it("a root request starts its own trace; one that never reached a batch is its request span alone", async () => {
    const [span, ...rest] = await spansOf(record({ traceparent: undefined, tracestate: undefined, run: undefined }));
    expect(rest).toEqual([]);
    expect(span!.parentSpanContext).toBeUndefined();
    expect(span!.spanContext().traceId).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("a failed request's span says why; gRPC spans carry the RPC's names", async () => {
    const [failed] = await spansOf(
      record({
        run: undefined,
        end: {
          protocol: "http",
          method: "POST",
          route: "/v1/classify",
          status: 503,
          error: { code: "overloaded", message: "queue full" },
        },
      }),
    );
    expect(failed!.status).toEqual({ code: 2, message: "queue full" });
    expect(failed!.attributes["error.type"]).toBe("overloaded");
    const [grpc] = await spansOf(
      record({ run: undefined, end: { protocol: "grpc", method: "ModelInfer", code: "OK" } }),
    );
    expect(grpc!.name).toBe("inference.GRPCInferenceService/ModelInfer");
    expect(grpc!.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.method": "ModelInfer",
      "rpc.grpc.status_code": "OK",
    });
  });
});
