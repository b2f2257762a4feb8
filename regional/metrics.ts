import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { CONFIDENCE_BUCKETS } from "../protocol/drift.ts";
import type { StepEvidence } from "../protocol/rollout/evidence.ts";
import { evidenceCounts } from "../protocol/rollout/evidence-counts.ts";
import { wilson } from "../protocol/wilson.ts";
import {
  type Cell,
  collectedGauge,
  DeferredHistogram,
  deferredCounter,
  type GaugeCell,
  getOrMake,
} from "./deferred-metrics.ts";
import { type ModelStatistics, sumStatistics, VersionStatistics } from "./model-stats.ts";
import type {
  InferenceOutcome,
  ModelRecorder,
  Recorder,
  RegistryRecorder,
  RolloutRecorder,
  TenantOutcome,
  TenantRecorder,
} from "./recorder.ts";

/** One process's metrics as `Registry.getMetricsAsJSON()` returns them. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/**
 * Prometheus metrics in the spirit of Triton's (nv_inference_request_success/failure, nv_inference_count,
 * nv_inference_exec_count, queue and compute durations), named edgecascade_*, in seconds. With
 * deferred-metrics.ts (the request path's series), the only modules that know prom-client; everything else
 * reports through `Recorder`.
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
  // Every worker of a pool applies each rollout change, so its counters and gauge are the same in each: the
  // cluster's sum would multiply them by the number of workers; "max" reports them once per pool.
  const oncePerPool = { aggregator: "max", ...common } as const;
  const rolloutPercent = new Gauge({
    name: "edgecascade_rollout_percent",
    help: "Share of requests (percent) the rollout's candidate answers: 0 in shadow or after a rollback, 100 once promoted.",
    labelNames: ["model", "candidate"],
    ...oncePerPool,
  });
  const rollbacks = new Counter({
    name: "edgecascade_rollout_rollbacks_total",
    help: "Rollouts rolled back (a sequential test found the candidate worse, or an operator rolled it back).",
    labelNames: ["model"],
    ...oncePerPool,
  });
  const promotions = new Counter({
    name: "edgecascade_rollout_promotions_total",
    help: "Rollouts whose candidate became the served version.",
    labelNames: ["model"],
    ...oncePerPool,
  });
  const shadowCopies = new Counter({
    name: "edgecascade_rollout_shadow_requests_total",
    help: "Live requests copied for a shadow run of both versions (queued), or dropped because the shadow queue was full.",
    labelNames: ["model", "outcome"],
    ...common,
  });
  const comparedRows = new Counter({
    name: "edgecascade_rollout_shadow_rows_total",
    help: "Rows run by both versions in shadow, by whether their labels agreed.",
    labelNames: ["model", "labels"],
    ...common,
  });
  // The current step's counts of every running rollout, read at scrape time: the controller sums them over pods
  // (Prometheus, `sum by (count)`), the cluster over workers.
  const evidenceReaders = new Map<string, () => StepEvidence | null>();
  new Gauge({
    name: "edgecascade_rollout_step_evidence",
    help: "The running rollout's current step, counted by this pool: live runs, errors, shadow comparisons and latency ranks (label count); the rollout controller sums it over pods.",
    labelNames: ["model", "rollout", "step", "count"],
    ...common,
    collect() {
      this.reset();
      for (const [model, read] of evidenceReaders) {
        const e = read();
        if (!e) continue;
        for (const [count, n] of Object.entries(evidenceCounts(e))) {
          this.set({ model, rollout: String(e.id), step: String(e.step), count }, n);
        }
      }
    },
  });
  const registryPolls = new Counter({
    name: "edgecascade_registry_polls_total",
    help: "Reads of the model registry's served states, by outcome: unchanged, changed (and applied), failed (the registry could not be read; the versions loaded keep serving).",
    labelNames: ["outcome"],
    ...common,
  });
  const registryRefusals = new Counter({
    name: "edgecascade_registry_refusals_total",
    help: "Registry objects refused before anything loaded them: a file whose checksum or signature fails, a config or served state that does not parse.",
    labelNames: ["model", "reason"],
    ...common,
  });
  const registryLastRead = new Gauge({
    name: "edgecascade_registry_last_read_timestamp_seconds",
    help: "When this pool last read the model registry successfully (Unix seconds); only pools started with --registry have it.",
    labelNames: ["registry"],
    aggregator: "min",
    ...common,
  });
  const registryRevision = new Gauge({
    name: "edgecascade_registry_served_revision",
    help: "The revision of each model's served state this pool follows.",
    labelNames: ["model"],
    aggregator: "min",
    ...common,
  });
  const registryRecorder = (registry: string): RegistryRecorder => ({
    poll(outcome) {
      registryPolls.inc({ outcome });
      if (outcome !== "failed") registryLastRead.set({ registry }, Date.now() / 1000);
    },
    refused: (model, reason) => registryRefusals.inc({ model, reason }),
    following: (model, revision) => registryRevision.set({ model }, revision),
  });
  // Drift (protocol/drift.ts): what each version predicts live, against what it predicted on held-out rows.
  const predictions = deferredCounter({
    name: "edgecascade_predictions_total",
    help: "Rows answered, by the class predicted (live answers only: no audits, no shadow runs).",
    labelNames: [...perVersion.labelNames, "class"],
    ...common,
  });
  const confidence = new DeferredHistogram({
    name: "edgecascade_prediction_confidence",
    help: "Top probability of each row answered.",
    buckets: CONFIDENCE_BUCKETS,
    ...perVersionHistogram,
  });
  // The same in every worker of a pool: reported once per pool ("max"), and once per process for a version
  // loaded twice (a reload: "max" of its instances).
  const heldoutShare = collectedGauge(
    {
      name: "edgecascade_heldout_class_share",
      help: "Share of the version's held-out rows predicted as each class at import (config.json heldout.classCounts): drift's baseline.",
      labelNames: [...perVersion.labelNames, "class"],
      aggregator: "max",
      ...common,
    },
    "max",
  );
  // The live audit (docs/observability.md): edge answers re-asked of the full model.
  const audits = deferredCounter({
    name: "edgecascade_cascade_audit_total",
    help: "Rows of edge answers re-asked of this full model version (audits), by whether it gave the edge's label.",
    labelNames: [...perVersion.labelNames, "agree"],
    ...common,
  });
  const importAgreement = collectedGauge(
    {
      name: "edgecascade_cascade_import_agreement",
      help: "Agreement of the edge variant with its full model on the held-out rows it answers, measured at import.",
      labelNames: ["model", "edge_model", "edge_version"],
      aggregator: "max",
      ...common,
    },
    "max",
  );
  const importAgreementLower = collectedGauge(
    {
      name: "edgecascade_cascade_import_agreement_lower",
      help: "Wilson 95% lower bound of the import agreement, over the held-out rows it was measured on.",
      labelNames: ["model", "edge_model", "edge_version"],
      aggregator: "max",
      ...common,
    },
    "max",
  );

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

  // Per tenant: the configuration's tenants plus `direct` and `other`, so the label set is as small as it is.
  const tenantRequests = deferredCounter({
    name: "edgecascade_tenant_requests_total",
    help: "Inference requests per tenant (the edge's, signed on the forward; direct: no tenant, e.g. gRPC), by outcome: success, shed (best-effort refused first), overloaded, rejected, expired, failed.",
    labelNames: ["tenant", "outcome"],
    ...common,
  });
  const tenantRows = deferredCounter({
    name: "edgecascade_tenant_rows_total",
    help: "Rows run per tenant, within its reservation (reserved) or as best-effort.",
    labelNames: ["tenant", "share"],
    ...common,
  });
  const tenantDuration = new DeferredHistogram({
    name: "edgecascade_tenant_request_duration_seconds",
    help: "Time from receiving a tenant's inference request to its answer being ready (requests that reached a model).",
    buckets: SECONDS,
    labelNames: ["tenant"],
    registers: [histograms],
  });
  // The configuration, per tenant: every worker has the same, so a cluster reports it once.
  const tenantReservation = new Gauge({
    name: "edgecascade_tenant_reserved_rows_per_second",
    help: "Rows per second reserved for a tenant (0 for best-effort), by class: compare with rate(edgecascade_tenant_rows_total[1m]).",
    labelNames: ["tenant", "class"],
    ...oncePerPool,
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
      const confidences = confidence.cell(labels);
      /** Per class index, its prediction count; built by `baseline` (labels are in the config). */
      let classCells: Cell[] = [];
      const auditCells = {
        agree: audits({ ...labels, agree: "true" }),
        disagree: audits({ ...labels, agree: "false" }),
      };
      const gauges: GaugeCell[] = [];
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
        predicted(probs, n, classes) {
          for (let row = 0; row < n; row++) {
            const base = row * classes;
            let best = 0;
            let top = probs[base]!;
            for (let c = 1; c < classes; c++) {
              const value = probs[base + c]!;
              if (value > top) {
                top = value;
                best = c;
              }
            }
            const cell = classCells[best];
            if (cell) cell.value += 1;
            confidences.observe(top);
          }
        },
        audited(agreeing, disagreeing) {
          auditCells.agree.value += agreeing;
          auditCells.disagree.value += disagreeing;
        },
        baseline({ labels: classLabels, classCounts, cascade }) {
          classCells = classLabels.map((label) => predictions({ ...labels, class: label }));
          if (classCounts) {
            const rowsSeen = classCounts.reduce((a, b) => a + b, 0);
            classLabels.forEach((label, c) => {
              const cell = heldoutShare({ ...labels, class: label });
              cell.value = rowsSeen > 0 ? classCounts[c]! / rowsSeen : 0;
              gauges.push(cell);
            });
          }
          if (cascade && cascade.answered > 0) {
            const edge = { model: cascade.standsFor, edge_model: model, edge_version: version };
            const measured = importAgreement(edge);
            measured.value = cascade.agreeing / cascade.answered;
            const lower = importAgreementLower(edge);
            lower.value = wilson(cascade.agreeing, cascade.answered).lower;
            gauges.push(measured, lower);
          }
        },
        dispose() {
          depth.dispose();
          p.dispose();
          ready.dispose();
          for (const cell of gauges) cell.dispose();
        },
      };
    },
    tenant(tenant, tenantClass, reservedRowsPerS): TenantRecorder {
      tenantReservation.set({ tenant, class: tenantClass }, reservedRowsPerS);
      const outcomes = new Map<TenantOutcome, Cell>();
      const outcome = (o: TenantOutcome) => getOrMake(outcomes, o, () => tenantRequests({ tenant, outcome: o }));
      const reserved = tenantRows({ tenant, share: "reserved" });
      const bestEffort = tenantRows({ tenant, share: "best-effort" });
      const duration = tenantDuration.cell({ tenant });
      return {
        request(o, seconds) {
          outcome(o).value += 1;
          if (seconds !== undefined) duration.observe(seconds);
        },
        rows(n, inReservation) {
          (inReservation ? reserved : bestEffort).value += n;
        },
      };
    },
    rollout(model): RolloutRecorder {
      const candidates = new Set<string>();
      return {
        started(candidate) {
          for (const old of candidates) rolloutPercent.remove({ model, candidate: old });
          candidates.clear();
          candidates.add(candidate);
        },
        percent: (candidate, percent) => rolloutPercent.set({ model, candidate }, percent),
        rolledBack: () => rollbacks.inc({ model }),
        promoted: () => promotions.inc({ model }),
        shadow: (outcome) => shadowCopies.inc({ model, outcome }),
        compared(rows, disagreements) {
          if (rows > disagreements) comparedRows.inc({ model, labels: "agree" }, rows - disagreements);
          if (disagreements > 0) comparedRows.inc({ model, labels: "disagree" }, disagreements);
        },
        evidence: (read) => evidenceReaders.set(model, read),
      };
    },
    registry: registryRecorder,
    modelLoad: (model, outcome) => loads.inc({ model, outcome }),
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
