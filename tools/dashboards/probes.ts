import { DashboardBuilder, RowBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { prometheusVariables, timeseries } from "./prometheus-panels.ts";

const SEL = 'url=~"$url", instance=~"$location"';

/**
 * The synthetic probes (tools/probe/prometheus.ts, scraped from each probe host: `instance` is where the probe
 * runs): p95 and p99 per location, the path mix, and the end-to-end SLOs' burn.
 */
export function probesDashboard(): DashboardBuilder {
  const dashboard = new DashboardBuilder("edgecascade / synthetic probes")
    .uid("edgecascade-probes")
    .tags(["edgecascade"])
    .description("What the synthetic probes measure from each of their locations (docs/observability.md).")
    .refresh("1m")
    .time({ from: "now-24h", to: "now" })
    .timezone("utc");
  prometheusVariables(dashboard, [
    { name: "url", label: "Edge", metric: "edgecascade_probe_sent" },
    { name: "location", label: "Probe location", metric: "edgecascade_probe_sent" },
  ]);
  return dashboard
    .withRow(new RowBuilder("Latency per location"))
    .withPanel(
      timeseries(
        "p95 and p99 per location",
        "Each run's latency from the scheduled send, every path, per probe location and edge.",
        "s",
        [
          [
            `max by (instance, url) (edgecascade_probe_latency_seconds{${SEL}, path="all", quantile="0.95"})`,
            "p95 {{instance}} {{url}}",
          ],
          [
            `max by (instance, url) (edgecascade_probe_latency_seconds{${SEL}, path="all", quantile="0.99"})`,
            "p99 {{instance}} {{url}}",
          ],
        ],
      ),
    )
    .withPanel(
      timeseries(
        "p95 against the target",
        "p95 over every request sent, failures counted as never answered, and the target it is judged against.",
        "s",
        [
          [`max by (instance, url) (edgecascade_probe_measured_p95_seconds{${SEL}})`, "{{instance}} {{url}}"],
          [`max(edgecascade_probe_p95_target_seconds{${SEL}})`, "target"],
        ],
      ),
    )
    .withRow(new RowBuilder("Who answered"))
    .withPanel(
      timeseries("Answers by path", "Share of each run's requests per answering path.", "percentunit", [
        [
          `sum by (path) (edgecascade_probe_answers{${SEL}}) / ignoring (path) group_left () sum(edgecascade_probe_sent{${SEL}})`,
          "{{path}}",
        ],
      ]),
    )
    .withPanel(
      timeseries("Answered within", "Share of each run's requests answered within each bound.", "percentunit", [
        [
          `sum by (bound_seconds) (edgecascade_probe_answered_within{${SEL}}) / ignoring (bound_seconds) group_left () sum(edgecascade_probe_sent{${SEL}})`,
          "within {{bound_seconds}} s",
        ],
      ]),
    )
    .withRow(new RowBuilder("End-to-end SLO burn rates (1 = on budget)"))
    .withPanel(
      timeseries(
        "Burn rates, 1h",
        "The probe SLO rules' error ratios over an hour, divided by their budgets.",
        "none",
        [
          ['url:edgecascade_probe_slo_latency_slow:ratio1h{url=~"$url"} / 0.05', "latency {{url}}"],
          ['url:edgecascade_probe_slo_degraded:ratio1h{url=~"$url"} / 0.01', "availability {{url}}"],
          ['url:edgecascade_probe_slo_errors:ratio1h{url=~"$url"} / 0.001', "errors {{url}}"],
        ],
      ),
    );
}
