import {
  CustomVariableBuilder,
  DashboardBuilder,
  DatasourceVariableBuilder,
  RowBuilder,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as TablePanel } from "@grafana/grafana-foundation-sdk/table";
import { PanelBuilder as TimeseriesPanel } from "@grafana/grafana-foundation-sdk/timeseries";
import { ANALYTICS, AnalyticsQueryBuilder } from "./analytics-query.ts";
import { ANALYTICS_QUERIES, GRAFANA } from "./analytics-sql.ts";

/** The datasets wrangler.toml binds as ANALYTICS, one per deployed environment. */
const DATASETS = ["edgecascade_requests_production", "edgecascade_requests_eu_only", "edgecascade_requests_staging"];

type QueryName = keyof typeof ANALYTICS_QUERIES;
const sql = (name: QueryName) => ANALYTICS_QUERIES[name](GRAFANA);

function series(title: string, description: string, unit: string, query: QueryName): TimeseriesPanel {
  return new TimeseriesPanel()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(ANALYTICS)
    .height(8)
    .span(12)
    .withTarget(new AnalyticsQueryBuilder(sql(query), "time_series"));
}

function table(title: string, description: string, query: QueryName, width = 12): TablePanel {
  return new TablePanel()
    .title(title)
    .description(description)
    .datasource(ANALYTICS)
    .height(8)
    .span(width)
    .withTarget(new AnalyticsQueryBuilder(sql(query), "table"));
}

/**
 * The edge's own numbers, from Workers Analytics Engine (one data point per request and per audit,
 * edge/analytics/) through the ClickHouse data source: who answers, degraded answers and why, latency per colo,
 * the live audit's agreement and drift, for the environment the `dataset` variable picks.
 */
export function edgeDashboard(): DashboardBuilder {
  return new DashboardBuilder("edgecascade / edge (Analytics Engine)")
    .uid("edgecascade-edge")
    .tags(["edgecascade"])
    .description(
      "The Worker's data points in Workers Analytics Engine, weighted by their sample interval (docs/observability.md).",
    )
    .refresh("1m")
    .time({ from: "now-24h", to: "now" })
    .timezone("utc")
    .withVariable(new DatasourceVariableBuilder("analytics").label("Analytics Engine").type(ANALYTICS.type))
    .withVariable(
      new CustomVariableBuilder("dataset")
        .label("Environment's dataset")
        .values(DATASETS.join(","))
        .current({ text: DATASETS[0]!, value: DATASETS[0]! }),
    )
    .withRow(new RowBuilder("Who answers"))
    .withPanel(
      series(
        "Edge share",
        "Share of answered requests the edge variant answered itself (and from the cache), per model.",
        "percentunit",
        "edgeShare",
      ),
    )
    .withPanel(
      series(
        "Degraded answers",
        "Share of answered requests answered by the edge alone because no region answered in time.",
        "percentunit",
        "degradedRate",
      ),
    )
    .withPanel(table("Why degraded", "Degraded answers by reason (the last region error).", "degradedReasons"))
    .withPanel(
      table(
        "Latency per colo",
        "p95 and p99 per colo of the time the Worker saw (edge answers read 0: its clock stands still between I/O).",
        "latencyPerColo",
      ),
    )
    .withRow(new RowBuilder("The cascade"))
    .withPanel(
      series(
        "Audit agreement",
        "Edge answers re-asked of the nearest region: the share it labelled as the edge did.",
        "percentunit",
        "auditAgreement",
      ),
    )
    .withPanel(
      table(
        "Predicted classes",
        "Answers per predicted class: the live mix the drift alert compares with the held-out one.",
        "predictedClasses",
      ),
    )
    .withPanel(
      table("Confidence", "Answers per top probability of the first row, in steps of 0.05.", "confidence", 24),
    );
}
