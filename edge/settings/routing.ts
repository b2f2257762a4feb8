import * as v from "valibot";
import { parseOrDescribe } from "../../protocol/schema-message.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/table.ts";
import type { Region } from "../regions/region.ts";
import { jsonValue } from "./json-value.ts";

const regionSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9-]{1,32}$/, "must be 1-32 lowercase letters, digits or '-'")),
  url: v.pipe(v.string(), v.url("must be an absolute URL"), v.regex(/^https?:\/\//, "must be http(s)")),
  latitude: v.pipe(v.number(), v.minValue(-90, "must be in [-90, 90]"), v.maxValue(90, "must be in [-90, 90]")),
  longitude: v.pipe(v.number(), v.minValue(-180, "must be in [-180, 180]"), v.maxValue(180, "must be in [-180, 180]")),
  continent: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, "must be a two-letter code such as NA"))),
  colos: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, "must hold IATA codes such as IAD")))),
  binding: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_]\w{0,63}$/, "must be a binding name such as REGION_US"))),
});
const regionsSchema = v.array(regionSchema);

function parseRegions(raw: string): Region[] {
  const parsed = parseOrDescribe(regionsSchema, jsonValue(raw));
  if (!parsed.ok) throw new UsageError(parsed.message);
  const names = new Set<string>();
  for (const region of parsed.value) {
    if (names.has(region.name)) throw new UsageError(`region "${region.name}" is listed twice`);
    names.add(region.name);
  }
  return parsed.value.map((r) => ({ ...r, url: r.url.replace(/\/+$/, "") }));
}

/**
 * Where the regions are and how the edge reaches them: the budget a request may spend, budget-aware routing,
 * hedging, the breakers and the region status checks (docs/edge.md, *Configuration*).
 */
export const ROUTING_SETTINGS = defineTable({
  regions: {
    env: "REGIONS",
    type: "parsed",
    default: [],
    defaultText: "`[]`",
    help: 'JSON array of regions: `[{"name","url","latitude","longitude","continent"?,"colos"?,"binding"?}]`',
    parse: parseRegions,
  },
  sharedSecret: {
    env: "REGIONAL_SHARED_SECRET",
    type: "string",
    defaultText: "unset",
    help: "secret: HMAC key for edge->regional calls; unset = calls go unsigned",
  },
  sloBudgetMs: {
    env: "SLO_BUDGET_MS",
    type: "number",
    min: 1,
    default: 10,
    unit: "ms",
    help: "time a request may take end to end, at the client; less the client's round trip, the regions' deadline",
  },
  maxBudgetMs: {
    env: "MAX_BUDGET_MS",
    type: "number",
    min: 1,
    defaultText: "`max(1000, SLO_BUDGET_MS)`",
    unit: "ms",
    help: "most a client may ask for with `x-edgecascade-budget-ms` (higher is capped); at least SLO_BUDGET_MS",
  },
  loadWaitMs: {
    env: "LOAD_WAIT_MS",
    type: "number",
    min: 0,
    max: 10_000,
    default: 100,
    unit: "ms",
    help: "longer the regions may take for a request whose edge variant has no session in the isolate (a region may be loading the model on demand), rather than creating the session on the request path",
  },
  rttReserveMaxShare: {
    env: "RTT_RESERVE_MAX_SHARE",
    type: "number",
    min: 0,
    max: 0.9,
    default: 0.5,
    help: "most of a budget kept back for the client's round trip (the regions keep the rest); 0 = none",
  },
  warmProbeIntervalMs: {
    env: "WARM_PROBE_INTERVAL_MS",
    type: "number",
    min: 1,
    default: 3000,
    unit: "ms",
    help: "least time between two warm probes of one region by one isolate",
  },
  reachQuantile: {
    env: "REACH_QUANTILE",
    type: "number",
    min: 0,
    max: 1,
    default: 0.9,
    help: "quantile of a region's own answer times that budget-aware routing compares with the budget left",
  },
  hedgeDelayMs: {
    env: "HEDGE_DELAY_MS",
    type: "number",
    min: 0,
    default: 5,
    unit: "ms",
    help: "hedge delay before a region has enough latency samples (half the default budget)",
  },
  hedgeBudgetRatio: {
    env: "HEDGE_BUDGET_RATIO",
    type: "number",
    min: 0,
    max: 1,
    default: 0.1,
    help: "hedges per forwarded request, long run",
  },
  hedgeBudgetBurst: {
    env: "HEDGE_BUDGET_BURST",
    type: "number",
    min: 0,
    default: 5,
    help: "hedges that may be spent back to back (token bucket size)",
  },
  breakerFailures: {
    env: "BREAKER_FAILURES",
    type: "number",
    integer: true,
    min: 1,
    default: 5,
    help: "consecutive failures or timeouts that open a region's breaker (Envoy's consecutive_5xx)",
  },
  breakerCooldownMs: {
    env: "BREAKER_COOLDOWN_MS",
    type: "number",
    min: 1,
    default: 30_000,
    unit: "ms",
    help: "cool-down before the half-open trial call; grows linearly with repeated ejections",
  },
  breakerMaxCooldownMs: {
    env: "BREAKER_MAX_COOLDOWN_MS",
    type: "number",
    min: 1,
    defaultText: "`max(300000, BREAKER_COOLDOWN_MS)`",
    unit: "ms",
    help: "longest cool-down; at least BREAKER_COOLDOWN_MS",
  },
  regionCheckTimeoutMs: {
    env: "REGION_CHECK_TIMEOUT_MS",
    type: "number",
    min: 1,
    default: 2000,
    unit: "ms",
    help: "timeout of each scheduled status check call, and the deadline of a warm probe's classify",
  },
  regionStatusMemoMs: {
    env: "REGION_STATUS_MEMO_MS",
    type: "number",
    min: 0,
    default: 5000,
    unit: "ms",
    help: "how long a request isolate reuses the stored region status report",
  },
});
