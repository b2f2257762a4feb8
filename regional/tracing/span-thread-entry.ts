import { parentPort, workerData } from "node:worker_threads";
import { DiagLogLevel, diag } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { SpanThreadData, ToSpanThread } from "./span-thread.ts";
import { createSpanWriter } from "./span-writer.ts";

/**
 * The span thread (regional/tracing/span-thread.ts): traced requests in, spans out over OTLP/HTTP. The SDK's
 * warnings (an export refused, the queue full) go back to the pool's log, at most one each 10 s with a count of
 * those held back, so a collector that is down is said once and does not flood the log.
 */
const port = parentPort!;
/**
 * Synthetic traced requests run through the span code at start (`warmUp`): about 0.4 s of this thread's CPU,
 * done within the first second, while the pool loads its models.
 */
const WARM_UP_RECORDS = 20_000;
const { config, region } = workerData as SpanThreadData;

/** An error with the code it carries (an OTLPExporterError's HTTP status, a socket's ECONNREFUSED); a flush fails with a list of them. */
const described = (a: unknown): string =>
  Array.isArray(a)
    ? a.map(described).join("; ")
    : a instanceof Error
      ? `${String(a)}${"code" in a && a.code !== undefined ? ` (${String(a.code)})` : ""}`
      : String(a);

let lastWarnMs = Number.NEGATIVE_INFINITY;
let heldBack = 0;
const warn = (message: string, ...args: unknown[]) => {
  const now = Date.now();
  if (now - lastWarnMs < 10_000) {
    heldBack++;
    return;
  }
  lastWarnMs = now;
  const detail = args.map(described).join(" ");
  port.postMessage({ warning: `${message}${detail ? ` ${detail}` : ""}`, heldBack });
  heldBack = 0;
};
const quiet = () => {};
diag.setLogger({ error: warn, warn, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);

const otlp = new OTLPTraceExporter({ url: config.url });
/** OpenTelemetry's OTLP/HTTP exporter, each failed export told to the pool (a metric there). */
const exporter: SpanExporter = {
  export(spans, done) {
    otlp.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) port.postMessage({ exportFailed: true });
      done(result);
    });
  },
  shutdown: () => otlp.shutdown(),
  forceFlush: () => otlp.forceFlush(),
};
const writer = createSpanWriter(config, region, exporter);

/**
 * Synthetic traced requests through a writer of their own whose exporter drops what it is given, before real
 * ones arrive: V8 optimises code by how often it has run, and at 1% sampling the thread would otherwise build
 * spans with cold code for a pool's first tens of thousands of traced requests (measured in a loop: 50-80 µs a
 * traced request over the first 4,000, 14 µs once warm). In chunks, each flushed, so that none is dropped.
 */
async function warmUp(records: number, chunk: number): Promise<void> {
  const dropAll: SpanExporter = {
    export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
  };
  const rehearsal = createSpanWriter(config, region, dropAll);
  const at = Date.now() * 1000;
  for (let done = 0; done < records; done += chunk) {
    for (let i = 0; i < chunk; i++) {
      rehearsal.write({
        traceparent: undefined,
        tracestate: undefined,
        receivedUs: at,
        endedUs: at + 900,
        model: "warm-up",
        version: "1",
        requestId: undefined,
        rows: 1,
        audit: false,
        run: {
          queuedUs: at + 100,
          batchStartUs: at + 300,
          runStartUs: at + 350,
          runEndUs: at + 750,
          rows: 1,
          requests: 1,
        },
        end: { protocol: "http", method: "POST", route: "/v1/classify", status: 200 },
      });
    }
    await rehearsal.flush();
  }
  await rehearsal.shutdown();
}
void warmUp(WARM_UP_RECORDS, Math.max(1, Math.floor(config.queueSize / 4)));

port.on("message", (message: ToSpanThread) => {
  if ("records" in message) {
    for (const record of message.records) writer.write(record);
    port.postMessage({ taken: message.records.length });
    return;
  }
  const last = "shutdown" in message;
  (last ? writer.shutdown() : writer.flush())
    .catch((err: Error) => warn("export failed:", err))
    .finally(() => {
      port.postMessage({ done: last ? message.shutdown : message.flush });
      if (last) port.close();
    });
});
