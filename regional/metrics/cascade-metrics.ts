import type { Registry } from "prom-client";
import { CONFIDENCE_BUCKETS } from "../../protocol/drift.ts";
import { wilson } from "../../protocol/wilson.ts";
import { type Cell, collectedGauge, DeferredHistogram, deferredCounter, type GaugeCell } from "../deferred-metrics.ts";
import type { ModelRecorder } from "../recorder.ts";

/** One model version's drift and audit cells: the part of its `ModelRecorder` that watches the cascade. */
export type CascadeRecorder = Pick<ModelRecorder, "predicted" | "audited" | "baseline" | "dispose">;

/**
 * The cascade's series per model version (docs/observability.md): drift (the classes predicted live and the
 * confidence of each row, against the held-out class shares) and the live audit (edge answers re-asked, and the
 * agreement the edge variant had at import).
 */
export function cascadeMetrics(
  common: { registers: Registry[] },
  /** The registry of the request path's histograms (read as JSON, deferred-metrics.ts). */
  histograms: Registry,
): (model: string, version: string) => CascadeRecorder {
  // Drift (protocol/drift.ts): what each version predicts live, against what it predicted on held-out rows.
  const predictions = deferredCounter({
    name: "edgecascade_predictions_total",
    help: "Rows answered, by the class predicted (live answers only: no audits, no shadow runs).",
    labelNames: ["model", "version", "class"],
    ...common,
  });
  const confidence = new DeferredHistogram({
    name: "edgecascade_prediction_confidence",
    help: "Top probability of each row answered.",
    buckets: CONFIDENCE_BUCKETS,
    labelNames: ["model", "version"],
    registers: [histograms],
  });
  // The same in every worker of a pool: reported once per pool ("max"), and once per process for a version
  // loaded twice (a reload: "max" of its instances).
  const heldoutShare = collectedGauge(
    {
      name: "edgecascade_heldout_class_share",
      help: "Share of the version's held-out rows predicted as each class at import (config.json heldout.classCounts): drift's baseline.",
      labelNames: ["model", "version", "class"],
      aggregator: "max",
      ...common,
    },
    "max",
  );
  // The live audit (docs/observability.md): edge answers re-asked of the full model.
  const audits = deferredCounter({
    name: "edgecascade_cascade_audit_total",
    help: "Rows of edge answers re-asked of this full model version (audits), by whether it gave the edge's label.",
    labelNames: ["model", "version", "agree"],
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

  return (model, version) => {
    const labels = { model, version };
    const confidences = confidence.cell(labels);
    /** Per class index, its prediction count; built by `baseline` (labels are in the config). */
    let classCells: Cell[] = [];
    const auditCells = {
      agree: audits({ ...labels, agree: "true" }),
      disagree: audits({ ...labels, agree: "false" }),
    };
    const gauges: GaugeCell[] = [];
    return {
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
        for (const cell of gauges) cell.dispose();
      },
    };
  };
}
