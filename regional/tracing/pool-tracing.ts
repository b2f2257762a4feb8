import type { Logger } from "../log.ts";
import type { TracingRecorder } from "../recorder.ts";
import { createRequestTracing, type RequestTracing, TRACING_OFF } from "./request-tracing.ts";
import { startSpanThread } from "./span-thread.ts";
import { type TracingOptions, tracingConfig } from "./tracing-config.ts";

/**
 * The pool's tracing as the OTEL_* options configure it, said in its log: off (and why), or requests sampled
 * on the event loop and made spans of on the span thread, whose warnings go to the log and losses to `recorder`.
 */
export function poolTracing(
  options: TracingOptions,
  region: string,
  log: Logger,
  recorder: TracingRecorder,
): RequestTracing {
  const settings = tracingConfig(options);
  if (!settings.on) {
    log("info", `tracing: off (${settings.reason})`);
    return TRACING_OFF;
  }
  const { config } = settings;
  log("info", `tracing: spans to ${config.url}`, { sampler: config.sampler, ratio: config.ratio });
  return createRequestTracing(
    config,
    startSpanThread(config, region, {
      warn: (message, fields) => log("warn", message, fields),
      dropped: recorder.dropped,
      exportFailed: recorder.exportFailed,
    }),
  );
}
