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
