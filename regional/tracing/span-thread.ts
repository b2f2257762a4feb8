import { Worker } from "node:worker_threads";
import type { SpanSink } from "./span-writer.ts";
import type { TraceRecord } from "./trace-record.ts";
import type { TracingConfig } from "./tracing-config.ts";

/** What the span thread starts with. */
export interface SpanThreadData {
  config: TracingConfig;
  region: string;
}

/** Messages to the span thread: traced requests to write, or a flush or shutdown to answer by its id. */
export type ToSpanThread = { records: TraceRecord[] } | { flush: number } | { shutdown: number };
type FromSpanThread =
  | { done: number }
  | { taken: number }
  | { exportFailed: true }
  | { warning: string; heldBack: number };

/** What the pool hears of the span thread: log lines, and its losses as metrics. */
export interface SpanThreadObserver {
  warn(message: string, fields?: Record<string, unknown>): void;
  dropped(requests: number): void;
  exportFailed(): void;
}

/** Records shipped together: one message per this many, or per `SHIP_MS`, whichever comes first. */
const SHIP_RECORDS = 512;
const SHIP_MS = 1000;

/**
 * Spans made and exported on a thread of their own, so that the event loop pays for a traced request a small
 * plain record, shipped in batches, and nothing of OpenTelemetry's span building, serialisation or HTTP.
 * Measured with the four pools of scripts/benchmarks/tracing-cost.ts loaded together, tracing 1% of requests
 * with the SDK on the event loop cost it 9% more CPU per request, 3% with spans built but not sent, and under 1%
 * this way. Most of that 9% was not the exporter's own work but its HTTP client's: V8's deoptimisation trace
 * showed the pool's node:http and stream functions (writeOrBuffer, _storeHeader, parserOnIncoming, ...)
 * deoptimised for a "wrong map" once the client's requests and streams went through them too.
 * The thread's heap is capped (an isolate costs the pool's RSS about 40 MB as it is); it never keeps the
 * process alive, except while a flush or shutdown waits for its answer; if it fails, tracing stops with one log
 * line and serving goes on.
 */
export function startSpanThread(config: TracingConfig, region: string, observer: SpanThreadObserver): SpanSink {
  const { warn } = observer;
  const data: SpanThreadData = { config, region };
  const worker = new Worker(new URL("./span-thread-entry.ts", import.meta.url), {
    workerData: data,
    name: "edgecascade-spans",
    resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
  });
  worker.unref();
  let pending: TraceRecord[] = [];
  /** Records shipped that the thread has not yet taken: what it is behind by. */
  let shipped = 0;
  let dropped = 0;
  let lastDropWarnMs = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let failed = false;
  let nextId = 0;
  const answers = new Map<number, () => void>();

  const ship = () => {
    clearTimeout(timer);
    timer = undefined;
    if (dropped > 0 && Date.now() - lastDropWarnMs >= 10_000) {
      warn("tracing: traced requests dropped, the span thread is behind", { dropped });
      lastDropWarnMs = Date.now();
      dropped = 0;
    }
    if (pending.length === 0 || failed) return;
    shipped += pending.length;
    worker.postMessage({ records: pending } satisfies ToSpanThread);
    pending = [];
  };
  const answerAll = () => {
    for (const answer of answers.values()) answer();
  };
  worker.on("message", (message: FromSpanThread) => {
    if ("taken" in message) shipped -= message.taken;
    else if ("exportFailed" in message) observer.exportFailed();
    else if ("warning" in message) {
      warn(`tracing: ${message.warning}`, message.heldBack > 0 ? { heldBack: message.heldBack } : undefined);
    } else answers.get(message.done)?.();
  });
  worker.on("error", (err) => {
    failed = true;
    warn("tracing: the span thread failed; no more spans are exported", { reason: err.message });
    answerAll();
  });
  worker.on("exit", () => {
    failed = true;
    answerAll();
  });
  /** Ship what is pending, then ask the thread to flush or shut down; resolves once it answers (or is gone). */
  const ask = (kind: "flush" | "shutdown"): Promise<void> => {
    ship();
    if (failed) return Promise.resolve();
    const id = ++nextId;
    worker.ref();
    const answered = new Promise<void>((resolve) => {
      answers.set(id, () => {
        answers.delete(id);
        if (answers.size === 0) worker.unref();
        resolve();
      });
    });
    worker.postMessage((kind === "flush" ? { flush: id } : { shutdown: id }) satisfies ToSpanThread);
    return answered;
  };

  return {
    write(record) {
      if (failed) return;
      // More than the export queue holds, between this side and the thread, means the thread is behind: drop, as
      // the SDK's queue would, rather than hold records without bound.
      if (pending.length + shipped >= config.queueSize) {
        dropped++;
        observer.dropped(1);
        return;
      }
      pending.push(record);
      if (pending.length >= SHIP_RECORDS) ship();
      else if (timer === undefined) timer = setTimeout(ship, SHIP_MS).unref();
    },
    flush: () => ask("flush"),
    async shutdown() {
      await ask("shutdown");
      await worker.terminate();
    },
  };
}
