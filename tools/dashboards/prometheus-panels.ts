import {
  type DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  VariableRefresh,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder as StatPanel } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as TimeseriesPanel } from "@grafana/grafana-foundation-sdk/timeseries";
import { grafanaVariable } from "./grafana-variable.ts";

/** Every Prometheus panel reads the data source the dashboard's `datasource` variable picks. */
export const PROMETHEUS = { type: "prometheus", uid: grafanaVariable("datasource") };

/** A query of the dashboard's Prometheus data source. */
export function promQuery(expr: string, legend: string, refId = "A"): DataqueryBuilder {
  return new DataqueryBuilder().datasource(PROMETHEUS).expr(expr).legendFormat(legend).refId(refId);
}

/** A time series panel of one or more PromQL queries (`[expr, legend]`). */
export function timeseries(
  title: string,
  description: string,
  unit: string,
  queries: readonly (readonly [string, string])[],
  width = 12,
): TimeseriesPanel {
  const panel = new TimeseriesPanel()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(PROMETHEUS)
    .height(8)
    .span(width);
  queries.forEach(([expr, legend], i) => {
    panel.withTarget(promQuery(expr, legend, String.fromCharCode(65 + i)));
  });
  return panel;
}

/** A single-value panel of one PromQL query. */
export function stat(title: string, description: string, unit: string, expr: string, legend: string): StatPanel {
  return new StatPanel()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(PROMETHEUS)
    .height(5)
    .span(6)
    .withTarget(promQuery(expr, legend));
}

/** The `datasource` variable (a Prometheus data source) and a multi-valued label filter per `labels` entry. */
export function prometheusVariables(
  dashboard: DashboardBuilder,
  labels: readonly { name: string; label: string; metric: string }[],
): DashboardBuilder {
  dashboard.withVariable(new DatasourceVariableBuilder("datasource").label("Prometheus").type("prometheus"));
  for (const { name, label, metric } of labels) {
    const query = `label_values(${metric}, ${name})`;
    dashboard.withVariable(
      new QueryVariableBuilder(name)
        .label(label)
        .datasource(PROMETHEUS)
        .query({ query, refId: "variable" })
        .definition(query)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .multi(true)
        .includeAll(true)
        .allValue(".*"),
    );
  }
  return dashboard;
}
