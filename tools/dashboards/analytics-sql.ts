import { column } from "../../edge/analytics/layout.ts";
import { grafanaVariable } from "./grafana-variable.ts";

/**
 * The edge's figures as Workers Analytics Engine SQL (edge/analytics/layout.ts' columns; every count weighted by
 * `_sample_interval`, since Analytics Engine samples): the Grafana dashboard's queries (with the ClickHouse data
 * source's `$timeSeries`/`$timeFilter` macros and the `${dataset}` variable) and, written for the SQL API
 * itself, docs/observability.md's. edge/analytics/figures.ts computes the same figures locally.
 */

/** How a query names time and the dataset: Grafana's macros, or plain SQL over the last day. */
export interface SqlDialect {
  timeSeries: string;
  timeFilter: string;
  dataset: string;
}

export const GRAFANA: SqlDialect = {
  timeSeries: "$timeSeries",
  timeFilter: "$timeFilter",
  dataset: grafanaVariable("dataset"),
};
export const SQL_API: SqlDialect = {
  timeSeries: "intDiv(toUInt32(timestamp), 300) * 300",
  timeFilter: "timestamp > NOW() - INTERVAL '1' DAY",
  dataset: "edgecascade_requests_production",
};

const c = column;
const ANSWERED = `${c("tier")} IN ('cache', 'edge', 'regional', 'degraded')`;

export const ANALYTICS_QUERIES = {
  /** Share of answered requests the edge variant answered itself, per model, every 5 minutes. */
  edgeShare: (d: SqlDialect) => `SELECT ${d.timeSeries} AS t, ${c("model")} AS model,
  SUM(IF(${c("tier")} = 'edge', _sample_interval, 0)) / SUM(_sample_interval) AS edge_share,
  SUM(IF(${c("tier")} = 'cache', _sample_interval, 0)) / SUM(_sample_interval) AS cache_share
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${ANSWERED}
GROUP BY t, model
ORDER BY t`,
  /** Share of answered requests that were degraded (no region in time), per model. */
  degradedRate: (d: SqlDialect) => `SELECT ${d.timeSeries} AS t, ${c("model")} AS model,
  SUM(IF(${c("tier")} = 'degraded', _sample_interval, 0)) / SUM(_sample_interval) AS degraded_rate
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${ANSWERED}
GROUP BY t, model
ORDER BY t`,
  /** Degraded answers by reason. */
  degradedReasons: (d: SqlDialect) => `SELECT ${c("degraded")} AS reason, SUM(_sample_interval) AS answers
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${c("tier")} = 'degraded'
GROUP BY reason
ORDER BY answers DESC`,
  /** p95 and p99 of the latency the Worker saw, per colo, weighted by the sample interval. */
  latencyPerColo: (d: SqlDialect) => `SELECT ${c("colo")} AS colo, SUM(_sample_interval) AS requests,
  quantileWeighted(0.95, ${c("latency_ms")}, _sample_interval) AS p95_ms,
  quantileWeighted(0.99, ${c("latency_ms")}, _sample_interval) AS p99_ms
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${ANSWERED}
GROUP BY colo
ORDER BY requests DESC`,
  /** The live audit's agreement per model: rows the region labelled as the edge did, of the rows audited. */
  auditAgreement: (d: SqlDialect) => `SELECT ${d.timeSeries} AS t, ${c("model")} AS model,
  SUM(_sample_interval * ${c("agreeing")}) / SUM(_sample_interval * ${c("rows")}) AS agreement,
  SUM(_sample_interval * ${c("rows")}) AS rows_audited
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${c("tier")} = 'audit' AND ${c("class")} != 'failed'
GROUP BY t, model
ORDER BY t`,
  /** Answers per predicted class, per model and version: drift against the config's held-out counts. */
  predictedClasses: (
    d: SqlDialect,
  ) => `SELECT ${c("model")} AS model, ${c("version")} AS version, ${c("class")} AS class,
  SUM(_sample_interval) AS answers
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${ANSWERED}
GROUP BY model, version, class
ORDER BY model, version, class`,
  /** Answers per confidence (the first row's top probability) in steps of 0.05, per model. */
  confidence: (d: SqlDialect) => `SELECT ${c("model")} AS model, floor(${c("confidence")} * 20) / 20 AS confidence,
  SUM(_sample_interval) AS answers
FROM ${d.dataset}
WHERE ${d.timeFilter} AND ${ANSWERED} AND ${c("confidence")} >= 0
GROUP BY model, confidence
ORDER BY model, confidence`,
} as const;
