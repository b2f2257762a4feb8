import type * as cog from "@grafana/grafana-foundation-sdk/cog";
import { grafanaVariable } from "./grafana-variable.ts";

/**
 * A query of the Altinity ClickHouse data source (`vertamedia-clickhouse-datasource`), the plugin Cloudflare
 * documents for querying Workers Analytics Engine from Grafana (docs/observability.md has its set-up). The
 * Foundation SDK ships no builder for this plugin; this is one, as its README shows for custom query types.
 */
export interface AnalyticsQuery {
  refId: string;
  datasource: { type: string; uid: string };
  query: string;
  rawQuery: boolean;
  format: "time_series" | "table";
  /** What `$timeFilter` and `$timeSeries` expand over: Analytics Engine's `timestamp`. */
  dateTimeColDataType: string;
  dateTimeType: "DATETIME";
  round: string;
  intervalFactor: number;
  _implementsDataqueryVariant(): void;
}

/** The dashboard's Analytics Engine data source: its `analytics` variable. */
export const ANALYTICS = { type: "vertamedia-clickhouse-datasource", uid: grafanaVariable("analytics") };

export class AnalyticsQueryBuilder implements cog.Builder<cog.Dataquery> {
  readonly #query: AnalyticsQuery;

  constructor(sql: string, format: AnalyticsQuery["format"], refId = "A") {
    this.#query = {
      refId,
      datasource: ANALYTICS,
      query: sql,
      rawQuery: true,
      format,
      dateTimeColDataType: "timestamp",
      dateTimeType: "DATETIME",
      round: "0s",
      intervalFactor: 1,
      _implementsDataqueryVariant() {},
    };
  }

  build(): AnalyticsQuery {
    return this.#query;
  }
}
