import type { DashboardBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { edgeDashboard } from "./edge.ts";
import { poolsDashboard } from "./pools.ts";
import { probesDashboard } from "./probes.ts";

/** Every dashboard, by the file it is written to under deploy/grafana/. */
export const DASHBOARDS: Readonly<Record<string, () => DashboardBuilder>> = {
  "pools.json": poolsDashboard,
  "probes.json": probesDashboard,
  "edge.json": edgeDashboard,
};

/** A dashboard's JSON as committed: Grafana's dashboard model, two-space indented. */
export function dashboardJson(build: () => DashboardBuilder): string {
  return `${JSON.stringify(build().build(), null, 2)}\n`;
}
