/**
 * `npm run traces [-- --port 4318]`: a local OTLP/HTTP trace receiver (scripts/otlp/receiver.ts) that prints each
 * span as it arrives and answers `GET /traces/<trace id>` with that trace's spans. Point the pools at it with
 * `OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start` to follow an answer's trace id locally
 * (docs/observability.md); Debian packages no OpenTelemetry Collector or Jaeger. Ctrl-C stops it.
 */
import { defineCommand, runMain } from "../tools/cli/command.ts";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp/receiver.ts";

const ms = (ns: bigint) => Number(ns / 1000n) / 1000;

function line(span: ReceivedSpan): string {
  const attributes = Object.entries(span.attributes)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(" ");
  const service = span.resource["service.name"] ?? "?";
  return `${span.traceId} ${span.spanId} <- ${span.parentSpanId || "(root)"} ${service} "${span.name}" ${ms(span.endNs - span.startNs).toFixed(3)} ms ${attributes}`;
}

runMain(
  defineCommand({
    name: "traces",
    usage: "npm run traces [-- --port 4318]",
    description:
      "A local OTLP/HTTP receiver for the pools' spans: prints them, and answers GET /traces/<trace id>.\n" +
      "Start the stack with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:<port> npm start.",
    flags: {
      port: { type: "number", min: 0, max: 65535, default: 4318, help: "port on 127.0.0.1 (OTLP/HTTP's own is 4318)" },
    },
    async run(values, _args, out) {
      const receiver = await startOtlpReceiver({
        port: values.port,
        onSpans: (spans) => {
          for (const span of spans) out.log(line(span));
        },
      });
      out.log(`OTLP/HTTP receiver on ${receiver.url}: OTEL_EXPORTER_OTLP_ENDPOINT=${receiver.url}`);
      out.log(`a trace's spans: curl -s ${receiver.url}/traces/<trace id>`);
      await new Promise<void>((resolve) => {
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolve());
      });
      await receiver.close();
      return 0;
    },
  }),
  { invocation: "npm run traces --", serves: true },
);
