import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../../scripts/otlp/receiver.ts";
import { type SpanThreadObserver, startSpanThread } from "./span-thread.ts";
import type { TraceRecord } from "./trace-record.ts";
import type { TracingConfig } from "./tracing-config.ts";

// The span thread for real: a worker thread with OpenTelemetry's OTLP/HTTP exporter, to a real receiver.
let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const config = (url: string): TracingConfig => ({
  url,
  sampler: "parentbased_traceidratio",
  ratio: 0.01,
  serviceName: "pool-eu",
  exportDelayMs: 60_000,
  queueSize: 100,
});
const now = Date.now() * 1000;
const record = (traceId: string): TraceRecord => ({
  traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
  tracestate: undefined,
  receivedUs: now,
  endedUs: now + 500,
  model: "digits",
  version: "1",
  requestId: undefined,
  rows: 1,
  audit: false,
  run: undefined,
  end: { protocol: "http", method: "POST", route: "/v1/classify", status: 200 },
});

/** Warnings into `warnings`, losses counted into `losses`. */
const observer = (warnings: string[], losses = { dropped: 0, failedExports: 0 }): SpanThreadObserver => ({
  warn: (message) => warnings.push(message),
  dropped: (n) => {
    losses.dropped += n;
  },
  exportFailed: () => {
    losses.failedExports++;
  },
});

describe("the span thread", () => {
  it("exports what was written once asked to flush, then shuts down and drops what comes after", async () => {
    const warnings: string[] = [];
    const thread = startSpanThread(config(`${receiver.url}/v1/traces`), "eu", observer(warnings));
    const ids = ["1".repeat(32), "2".repeat(32), "3".repeat(32)];
    for (const id of ids) thread.write(record(id));
    await thread.flush();
    for (const id of ids) {
      expect(
        receiver.trace(id).map((s) => [s.name, s.resource["service.name"], s.attributes["triton.model_name"]]),
      ).toEqual([["POST /v1/classify", "pool-eu", "digits"]]);
    }
    await thread.shutdown();
    const exports = receiver.exports;
    thread.write(record("4".repeat(32)));
    await thread.flush();
    expect(receiver.exports).toBe(exports);
    expect(warnings).toEqual([]);
    // The thread's warm-up at start (synthetic requests through a writer of its own) never reaches the collector.
    expect(receiver.spans().filter((s) => s.attributes["triton.model_name"] === "warm-up")).toEqual([]);
  });

  it("drops what the thread is behind by beyond the export queue, and says how many", async () => {
    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const losses = { dropped: 0, failedExports: 0 };
    const thread = startSpanThread({ ...config(`${receiver.url}/v1/traces`), queueSize: 2 }, "eu", {
      ...observer([], losses),
      warn: (m, f) => warnings.push([m, f]),
    });
    // Written in one go, before the thread can say it has taken any: two fit, eight are dropped.
    const ids = Array.from({ length: 10 }, (_, i) => `${(i + 6).toString(16)}`.repeat(32).slice(0, 32));
    for (const id of ids) thread.write(record(id));
    await thread.flush();
    await thread.shutdown();
    expect(ids.map((id) => receiver.trace(id).length)).toEqual([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(warnings).toEqual([["tracing: traced requests dropped, the span thread is behind", { dropped: 8 }]]);
    expect(losses).toEqual({ dropped: 8, failedExports: 0 });
  });

  it("a collector that refuses the export is said in the pool's log", async () => {
    const warnings: string[] = [];
    const losses = { dropped: 0, failedExports: 0 };
    const thread = startSpanThread(config(`${receiver.url}/not-traces`), "eu", observer(warnings, losses));
    thread.write(record("5".repeat(32)));
    await thread.flush();
    await thread.shutdown();
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatch(/^tracing: .*404/);
    expect(losses).toEqual({ dropped: 0, failedExports: 1 });
    expect(receiver.trace("5".repeat(32))).toEqual([]);
  });
});
