import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { InferenceOutcome, ModelRecorder, Recorder } from "./recorder.ts";

/**
 * Prometheus metrics in the spirit of Triton's (nv_inference_request_success/failure, nv_inference_count,
 * nv_inference_exec_count, queue and compute durations), named edgecascade_*, in seconds. The only module
 * that knows prom-client; everything else reports through `Recorder`.
 */
/** One process's metrics as `Registry.getMetricsAsJSON()` returns them. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

export interface Metrics {
  recorder: Recorder;
  /** The exposition text of this process. */
  text(): Promise<string>;
  /** This process's metrics as JSON, for a cluster primary to aggregate. */
  json(): Promise<MetricsJson>;
  contentType: string;
}

/** Latencies from 25 µs to 2.5 s: a batch of this MLP runs in tens of microseconds, a slow request in seconds. */
const SECONDS = [
  0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5,
];
const ROWS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names three gauges *_total, which promtool rejects (the suffix is for counters); the same
  // counts stay available, by type, as nodejs_active_handles/_requests/_resources.
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) {
    registry.removeSingleMetric(name);
  }
  const modelLabels = ["model", "version"] as const;
  const common = { registers: [registry] };

  const requests = new Counter({
    name: "edgecascade_inference_requests_total",
    help: "Inference requests that reached a model, by outcome: success, rejected (queue full), expired (deadline passed before running), failed.",
    labelNames: [...modelLabels, "outcome"],
    ...common,
  });
  const rows = new Counter({
    name: "edgecascade_inference_rows_total",
    help: "Rows inferred (Triton's nv_inference_count); divided by executions, the mean batch size.",
    labelNames: modelLabels,
    ...common,
  });
  const executions = new Counter({
    name: "edgecascade_inference_executions_total",
    help: "Model executions, i.e. session.run calls (Triton's nv_inference_exec_count).",
    labelNames: modelLabels,
    ...common,
  });
  const requestDuration = new Histogram({
    name: "edgecascade_inference_request_duration_seconds",
    help: "Time from receiving an inference request to its answer being ready, by model version.",
    labelNames: modelLabels,
    buckets: SECONDS,
    ...common,
  });
  const queueDuration = new Histogram({
    name: "edgecascade_inference_queue_duration_seconds",
    help: "Time a request waited in the batcher's queue before its run started.",
    labelNames: modelLabels,
    buckets: SECONDS,
    ...common,
  });
  const computeDuration = new Histogram({
    name: "edgecascade_inference_compute_duration_seconds",
    help: "Duration of one model execution (one batch).",
    labelNames: modelLabels,
    buckets: SECONDS,
    ...common,
  });
  const batchSize = new Histogram({
    name: "edgecascade_inference_batch_size",
    help: "Rows per model execution.",
    labelNames: modelLabels,
    buckets: ROWS,
    ...common,
  });
  const queueDepth = new Gauge({
    name: "edgecascade_inference_queue_depth",
    help: "Requests waiting in the batcher's queue; the signal to autoscale on.",
    labelNames: modelLabels,
    ...common,
  });
  const pending = new Gauge({
    name: "edgecascade_inference_pending_requests",
    help: "Inference requests accepted by a model version and not yet answered (waiting, queued or running).",
    labelNames: modelLabels,
    ...common,
  });
  const modelReady = new Gauge({
    name: "edgecascade_model_ready",
    help: "1 while the model version serves, else 0.",
    labelNames: modelLabels,
    aggregator: "min",
    ...common,
  });
  const loads = new Counter({
    name: "edgecascade_model_loads_total",
    help: "Model load attempts (sha256 check, session, warm-up, fixture check), by outcome.",
    labelNames: ["model", "outcome"],
    ...common,
  });
  const provider = new Gauge({
    name: "edgecascade_execution_provider",
    help: "1 for the onnxruntime execution provider the sessions run on.",
    labelNames: ["provider"],
    aggregator: "max",
    ...common,
  });
  const http = new Counter({
    name: "edgecascade_http_responses_total",
    help: "HTTP responses by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    ...common,
  });

  const httpChildren = new Map<string, Counter.Internal>();
  const recorder: Recorder = {
    model(model, version): ModelRecorder {
      const labels = { model, version };
      const outcomes = new Map<InferenceOutcome, Counter.Internal>();
      const outcome = (o: InferenceOutcome) => {
        let child = outcomes.get(o);
        if (!child) {
          child = requests.labels({ ...labels, outcome: o });
          outcomes.set(o, child);
        }
        return child;
      };
      const r = rows.labels(labels);
      const e = executions.labels(labels);
      const rd = requestDuration.labels(labels);
      const qd = queueDuration.labels(labels);
      const cd = computeDuration.labels(labels);
      const bs = batchSize.labels(labels);
      const depth = queueDepth.labels(labels);
      const p = pending.labels(labels);
      const ready = modelReady.labels(labels);
      return {
        pending: (delta) => p.inc(delta),
        queueDepth: (n) => depth.set(n),
        queued: (s) => qd.observe(s),
        executed(n, s) {
          r.inc(n);
          e.inc();
          bs.observe(n);
          cd.observe(s);
        },
        request(o, s) {
          outcome(o).inc();
          rd.observe(s);
        },
        ready: (yes) => ready.set(yes ? 1 : 0),
      };
    },
    modelLoad: (model, outcome) => loads.inc({ model, outcome }),
    executionProvider(name) {
      provider.reset();
      provider.set({ provider: name }, 1);
    },
    httpResponse(method, route, status) {
      // One child per (method, route, status), so the request path skips prom-client's label hashing.
      const key = `${method} ${status} ${route}`;
      let child = httpChildren.get(key);
      if (!child) {
        child = http.labels({ method, route, status: String(status) });
        httpChildren.set(key, child);
      }
      child.inc();
    },
  };

  return {
    recorder,
    text: () => registry.metrics(),
    json: () => registry.getMetricsAsJSON(),
    contentType: registry.contentType,
  };
}

/** One exposition text from several processes' JSON metrics (counters and histograms summed). */
export async function aggregateMetrics(perProcess: MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate(perProcess).metrics();
}
