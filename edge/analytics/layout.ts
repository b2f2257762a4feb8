/**
 * Where each field of the edge's Analytics Engine data points is (data-point.ts writes them): the layout the
 * docs' SQL, the Grafana dashboard (tools/dashboards/) and the local figures (figures.ts) read. Change it only
 * with them; `column` names a field's SQL column.
 */

/** What a data point's blobs hold, in order (blob1 ... blob10). */
export const BLOBS = [
  "tier", // cache, edge, regional, degraded, error; audit for an audit's point
  "degraded", // why a degraded answer is degraded (regions-failed, too-far, ...), else ""
  "model", // the logical model, "" when the request named none the edge serves
  "version", // the model version answered (an audit: the region's)
  "colo", // request.cf.colo, "" locally
  "region", // the region that answered, else the first one tried (an audit: the region asked), else ""
  "tenant", // the API key's tenant, anonymous without keys
  "status", // the HTTP status of the answer (an audit: the region's, or "failed")
  "class", // the predicted label of the first row ("" for errors); an audit: agree, disagree or failed
  "trace", // the trace id the answer names (Server-Timing traceparent)
] as const;

/** What a data point's doubles hold, in order (double1 ... double6). */
export const DOUBLES = [
  "latency_ms", // arrival to answer as the Worker's clock sees it (it stands still between I/O: an edge answer reads 0)
  "edge_top", // the edge variant's lowest top probability over the rows (what the cascade decided on); -1 when it did not run
  "region_ms", // the region's answer time (an audit: its call), 0 when no region answered
  "rows", // rows in the request (an audit: rows re-asked)
  "agreeing", // an audit's rows the region labelled as the edge did; 0 otherwise
  "confidence", // the answer's top probability of the first row (drift's confidence histogram); -1 for errors
] as const;

/** A field's column in Analytics Engine's SQL: `blob1`..`blob20`, `double1`..`double20`. */
export function column(field: (typeof BLOBS)[number] | (typeof DOUBLES)[number]): string {
  const blob = (BLOBS as readonly string[]).indexOf(field);
  if (blob >= 0) return `blob${blob + 1}`;
  return `double${(DOUBLES as readonly string[]).indexOf(field) + 1}`;
}
