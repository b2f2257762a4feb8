import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { type Cell, collectedGauge, DeferredHistogram, deferredCounter, getOrMake } from "./deferred-metrics.ts";
import { cascadeMetrics } from "./metrics/cascade-metrics.ts";
import { modelMemoryMetrics } from "./metrics/model-memory-metrics.ts";
import { registryMetrics } from "./metrics/registry-metrics.ts";
import { rolloutMetrics } from "./metrics/rollout-metrics.ts";
import { tenantMetrics } from "./metrics/tenant-metrics.ts";
import { tracingMetrics } from "./metrics/tracing-metrics.ts";
import { type ModelStatistics, sumStatistics, VersionStatistics } from "./model-stats.ts";
import type { InferenceOutcome, ModelRecorder, Recorder } from "./recorder.ts";

/** One process's metrics as `Registry.getMetricsAsJSON()` returns them. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/**
 * Prometheus metrics in the spirit of Triton's (nv_inference_request_success/failure, nv_inference_count,
 * nv_inference_exec_count, queue and compute durations), named edgecascade_*, in seconds. With
 * deferred-metrics.ts (the request path's series) and the families of `metrics/` (rollouts, the registry, the
 * cascade's drift and audit, tenants), the only modules that know prom-client; everything else reports through
 * `Recorder`.
 */
export interface Metrics {
  recorder: Recorder;
  /** The exposition text of this process. */
  text(): Promise<string>;
  /** This process's metrics as JSON, for a cluster primary to aggregate. */
  json(): Promise<MetricsJson>;
  /** Triton's statistics of every model version this process has served (model-stats.ts). */
  statistics(): ModelStatistics[];
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
  const common = { registers: [registry] };
  // Triton's series are per model version.
  const perVersion = { labelNames: ["model", "version"] as const, ...common };
  // The request path's histograms, apart: read as JSON only (deferred-metrics.ts).
  const histograms = new Registry();
  const perVersionHistogram = { labelNames: perVersion.labelNames, registers: [histograms] };
  const durationSeconds = (name: string, help: string) =>
    new DeferredHistogram({ name, help, buckets: SECONDS, ...perVersionHistogram });

  const requests = deferredCounter({
    name: "edgecascade_inference_requests_total",
    help: "Inference requests that reached a model, by outcome: success, rejected (queue full), expired (deadline passed before running), failed.",
    labelNames: [...perVersion.labelNames, "outcome"],
    ...common,
  });
  const rows = deferredCounter({
    name: "edgecascade_inference_rows_total",
    help: "Rows inferred (Triton's nv_inference_count); divided by executions, the mean batch size.",
    ...perVersion,
  });
  const executions = deferredCounter({
    name: "edgecascade_inference_executions_total",
    help: "Model executions, i.e. session.run calls (Triton's nv_inference_exec_count).",
    ...perVersion,
  });
  const requestDuration = durationSeconds(
    "edgecascade_inference_request_duration_seconds",
    "Time from receiving an inference request to its answer being ready, by model version.",
  );
  const queueDuration = durationSeconds(
    "edgecascade_inference_queue_duration_seconds",
    "Time a request waited in the batcher's queue before its run started.",
  );
  const computeDuration = durationSeconds(
    "edgecascade_inference_compute_duration_seconds",
    "Duration of one model execution (one batch).",
  );
  const batchSize = new DeferredHistogram({
    name: "edgecascade_inference_batch_size",
    help: "Rows per model execution.",
    buckets: ROWS,
    ...perVersionHistogram,
  });
  const queueDepth = collectedGauge({
    name: "edgecascade_inference_queue_depth",
    help: "Requests waiting in the batcher's queue; the signal to autoscale on.",
    ...perVersion,
  });
  const pending = collectedGauge({
    name: "edgecascade_inference_pending_requests",
    help: "Inference requests accepted by a model version and not yet answered (waiting, queued or running).",
    ...perVersion,
  });
  const modelReady = collectedGauge({
    name: "edgecascade_model_ready",
    help: "1 while the model version serves, else 0.",
    aggregator: "min",
    ...perVersion,
  });
  const loads = new Counter({
    name: "edgecascade_model_loads_total",
    help: "Model load attempts (sha256 check, session, warm-up, fixture check), by outcome.",
    labelNames: ["model", "outcome"],
    ...common,
  });
  const backgroundFailures = new Counter({
    name: "edgecascade_background_failures_total",
    help: "Failures of work off the request path, each logged with its reason, by task: shadow-run (a rollout's shadow run of a version), release (a retired version's session).",
    labelNames: ["task", "model", "version"],
    ...common,
  });
  const provider = new Gauge({
    name: "edgecascade_execution_provider",
    help: "1 for the onnxruntime execution provider the sessions run on.",
    labelNames: ["provider"],
    aggregator: "max",
    ...common,
  });
  const signatures = new Gauge({
    name: "edgecascade_model_signatures_required",
    help: "1 when every model file must carry a valid Ed25519 signature (--model-public-key), 0 when unsigned models are served.",
    aggregator: "min",
    ...common,
  });
  const rollout = rolloutMetrics(common);
  const registryRecorder = registryMetrics(common);
  const cascade = cascadeMetrics(common, histograms);
  const tenant = tenantMetrics(common, histograms, SECONDS);

  const http = deferredCounter({
    name: "edgecascade_http_responses_total",
    help: "HTTP responses by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    ...common,
  });

  const grpc = deferredCounter({
    name: "edgecascade_grpc_responses_total",
    help: "gRPC calls answered, by method and status code.",
    labelNames: ["method", "code"],
    ...common,
  });

  const httpCells = new Map<string, Cell>();
  // One per model version for the life of the process, like the counters: a reloaded version keeps counting.
  const statistics = new Map<string, VersionStatistics>();
  const grpcCells = new Map<string, Cell>();
  const recorder: Recorder = {
    model(model, version): ModelRecorder {
      const labels = { model, version };
      const st = getOrMake(statistics, `${model}\u0000${version}`, () => new VersionStatistics(model, version));
      const outcomes = new Map<InferenceOutcome, Cell>();
      const outcome = (o: InferenceOutcome) => getOrMake(outcomes, o, () => requests({ ...labels, outcome: o }));
      const r = rows(labels);
      const e = executions(labels);
      const rd = requestDuration.cell(labels);
      const qd = queueDuration.cell(labels);
      const cd = computeDuration.cell(labels);
      const bs = batchSize.cell(labels);
      const depth = queueDepth(labels);
      const p = pending(labels);
      const ready = modelReady(labels);
      const watch = cascade(model, version);
      return {
        pending: (delta) => {
          p.value += delta;
        },
        queueDepth: (n) => {
          depth.value = n;
        },
        queued(s) {
          qd.observe(s);
          st.queued(s);
        },
        executed(n, s, requests) {
          r.value += n;
          e.value += 1;
          bs.observe(n);
          cd.observe(s);
          st.executed(n, s, requests);
        },
        request(o, s) {
          outcome(o).value += 1;
          rd.observe(s);
          st.request(o, s, Date.now());
        },
        ready: (yes) => {
          ready.value = yes ? 1 : 0;
        },
        predicted: watch.predicted,
        audited: watch.audited,
        baseline: watch.baseline,
        dispose() {
          depth.dispose();
          p.dispose();
          ready.dispose();
          watch.dispose();
        },
      };
    },
    tenant,
    rollout,
    registry: registryRecorder,
    tracing: tracingMetrics(common),
    modelLoad: (model, outcome) => loads.inc({ model, outcome }),
    ...modelMemoryMetrics(common),
    backgroundFailure: (task, model, version) => backgroundFailures.inc({ task, model, version }),
    modelSignatures: (required) => signatures.set(required ? 1 : 0),
    executionProvider(name) {
      provider.reset();
      provider.set({ provider: name }, 1);
    },
    httpResponse(method, route, status) {
      getOrMake(httpCells, `${method} ${status} ${route}`, () =>
        http({ method, route, status: String(status) }),
      ).value += 1;
    },
    grpcResponse(method, code) {
      getOrMake(grpcCells, `${method} ${code}`, () => grpc({ method, code })).value += 1;
    },
  };

  return {
    recorder,
    text: async () => `${await registry.metrics()}\n${await histogramsText(histograms)}`,
    json: async () => [...(await registry.getMetricsAsJSON()), ...(await histograms.getMetricsAsJSON())],
    statistics: () => sumStatistics([[...statistics.values()].map((s) => s.snapshot())]),
    contentType: registry.contentType,
  };
}

/** A registry of DeferredHistograms as exposition text: through their JSON, which is what they answer for. */
async function histogramsText(histograms: Registry): Promise<string> {
  return AggregatorRegistry.aggregate([await histograms.getMetricsAsJSON()]).metrics();
}

/** One exposition text from several processes' JSON metrics (counters and histograms summed). */
export async function aggregateMetrics(perProcess: MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate(perProcess).metrics();
}
