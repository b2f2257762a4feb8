import { DashboardBuilder, RowBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { prometheusVariables, stat, timeseries } from "./prometheus-panels.ts";

const SEL = 'region=~"$region", model=~"$model"';
const quantile = (q: number, metric: string, by = "region") =>
  `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket{${SEL}}[$__rate_interval])))`;

/**
 * The regional pools (regional/metrics.ts' series and the recording rules of deploy/prometheus/): traffic,
 * latency per stage, queue, batch size, the live audit's agreement, drift, and the SLOs' burn.
 */
export function poolsDashboard(): DashboardBuilder {
  const dashboard = new DashboardBuilder("edgecascade / regional pools")
    .uid("edgecascade-pools")
    .tags(["edgecascade"])
    .description(
      "The regional pools: traffic, latency, queues, batches, the live audit, drift and SLO burn (docs/observability.md).",
    )
    .refresh("30s")
    .time({ from: "now-6h", to: "now" })
    .timezone("utc");
  prometheusVariables(dashboard, [
    { name: "region", label: "Region", metric: "edgecascade_inference_requests_total" },
    { name: "model", label: "Model", metric: "edgecascade_inference_requests_total" },
  ]);
  return dashboard
    .withRow(new RowBuilder("Traffic"))
    .withPanel(
      timeseries("Requests per second", "Inference requests that reached a model, by region and model.", "reqps", [
        [
          `sum by (region, model) (rate(edgecascade_inference_requests_total{${SEL}}[$__rate_interval]))`,
          "{{region}} {{model}}",
        ],
      ]),
    )
    .withPanel(
      timeseries("Outcomes", "Requests by how they ended: success, rejected (queue full), expired, failed.", "reqps", [
        [`sum by (outcome) (rate(edgecascade_inference_requests_total{${SEL}}[$__rate_interval]))`, "{{outcome}}"],
      ]),
    )
    .withRow(new RowBuilder("Latency by stage"))
    .withPanel(
      timeseries(
        "p95 and p99: receipt to answer",
        "The pool's own time per request (the edge adds the network), per region.",
        "s",
        [
          [quantile(0.95, "edgecascade_inference_request_duration_seconds"), "p95 {{region}}"],
          [quantile(0.99, "edgecascade_inference_request_duration_seconds"), "p99 {{region}}"],
        ],
      ),
    )
    .withPanel(
      timeseries(
        "p95 per stage",
        "Where a request's time goes: waiting in the batcher's queue, and its batch's run.",
        "s",
        [
          [quantile(0.95, "edgecascade_inference_queue_duration_seconds"), "queue {{region}}"],
          [quantile(0.95, "edgecascade_inference_compute_duration_seconds"), "compute {{region}}"],
        ],
      ),
    )
    .withRow(new RowBuilder("Queue and batches"))
    .withPanel(
      timeseries("Queue depth", "Requests waiting in the batchers' queues (the autoscaling signal).", "short", [
        [`sum by (region) (edgecascade_inference_queue_depth{${SEL}})`, "{{region}}"],
      ]),
    )
    .withPanel(
      timeseries("Batch size", "Rows per session.run: the mean, and the p95 of the batch size histogram.", "short", [
        [
          `sum by (region) (rate(edgecascade_inference_rows_total{${SEL}}[$__rate_interval])) / sum by (region) (rate(edgecascade_inference_executions_total{${SEL}}[$__rate_interval]))`,
          "mean {{region}}",
        ],
        [quantile(0.95, "edgecascade_inference_batch_size"), "p95 {{region}}"],
      ]),
    )
    .withRow(new RowBuilder("The cascade: live audit and drift"))
    .withPanel(
      timeseries(
        "Audit agreement (last hour)",
        "Edge answers re-asked of the full model: the share it labelled as the edge did, the Wilson 95% upper bound of that share, and the import's lower bound the alert compares it with.",
        "percentunit",
        [
          [`region_model:edgecascade_cascade_audit_agreement:ratio1h{${SEL}}`, "live {{region}} {{model}}"],
          [
            `region_model:edgecascade_cascade_audit_agreement:wilson_upper1h{${SEL}}`,
            "live, upper bound {{region}} {{model}}",
          ],
          [
            `max by (region, model) (edgecascade_cascade_import_agreement_lower{${SEL}})`,
            "import, lower bound {{region}} {{model}}",
          ],
        ],
      ),
    )
    .withPanel(
      timeseries("Audited rows", "Rows audited per second, by whether the full model agreed.", "short", [
        [
          `sum by (model, agree) (rate(edgecascade_cascade_audit_total{${SEL}}[$__rate_interval]))`,
          "{{model}} agree={{agree}}",
        ],
      ]),
    )
    .withPanel(
      timeseries(
        "Drift (PSI, last hour)",
        "Population stability index of each version's predicted classes against its held-out mix; over 0.25 alerts.",
        "none",
        [[`region_model_version:edgecascade_prediction_drift_psi:1h{${SEL}}`, "{{region}} {{model}} {{version}}"]],
      ),
    )
    .withPanel(
      timeseries(
        "Predicted classes (last hour) against held-out",
        "Share of answers per class, and the held-out share at import.",
        "percentunit",
        [
          [
            `sum by (model, class) (region_model_version_class:edgecascade_predictions:share1h{${SEL}})`,
            "live {{model}} {{class}}",
          ],
          [`max by (model, class) (edgecascade_heldout_class_share{${SEL}})`, "held-out {{model}} {{class}}"],
        ],
      ),
    )
    .withPanel(
      timeseries("Confidence", "p50 and p10 of the top probability of each row answered.", "percentunit", [
        [quantile(0.5, "edgecascade_prediction_confidence", "model"), "p50 {{model}}"],
        [quantile(0.1, "edgecascade_prediction_confidence", "model"), "p10 {{model}}"],
      ]),
    )
    .withRow(new RowBuilder("SLO burn rates (1 = on budget)"))
    .withPanel(
      stat(
        "Latency burn, 1h",
        "Share of requests over 10 ms in the last hour, over the 5% budget.",
        "none",
        'max(region:edgecascade_slo_latency_slow:ratio_rate1h{region=~"$region"}) / 0.05',
        "burn",
      ),
    )
    .withPanel(
      stat(
        "Errors burn, 1h",
        "Share of 5xx answers in the last hour, over the 0.1% budget.",
        "none",
        'max(region:edgecascade_slo_errors:ratio_rate1h{region=~"$region"}) / 0.001',
        "burn",
      ),
    )
    .withPanel(
      timeseries("Burn rates", "The SLO rules' error ratios over their windows, divided by the budget.", "none", [
        ['region:edgecascade_slo_latency_slow:ratio_rate1h{region=~"$region"} / 0.05', "latency 1h {{region}}"],
        ['region:edgecascade_slo_latency_slow:ratio_rate6h{region=~"$region"} / 0.05', "latency 6h {{region}}"],
        ['region:edgecascade_slo_errors:ratio_rate1h{region=~"$region"} / 0.001', "errors 1h {{region}}"],
        ['region:edgecascade_slo_errors:ratio_rate6h{region=~"$region"} / 0.001', "errors 6h {{region}}"],
      ]),
    );
}
