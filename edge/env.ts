import * as v from "valibot";
import { isPublicKeyText } from "../protocol/model-signature.ts";
import { parseOrDescribe } from "../protocol/schema-message.ts";
import { UsageError } from "../tools/cli/errors.ts";
import { defineTable, type FlagValues, readTable, type TableVariables } from "../tools/cli/table.ts";
import { missingBindings } from "./forward/region-transport.ts";
import type { Region } from "./regions/region.ts";
import { parseTenantKeys, type TenantKey } from "./tenants/keys.ts";
import { parseTenantPolicies, type TenantPolicy } from "./tenants/policies.ts";

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

const thresholdsSchema = v.record(
  v.string(),
  v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]")),
);

/** A JSON variable's value (a wrangler.toml array or table arrives as its JSON text too). */
function json(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`invalid JSON: ${(err as Error).message}`);
  }
}

function parseRegions(raw: string): Region[] {
  const parsed = parseOrDescribe(regionsSchema, json(raw));
  if (!parsed.ok) throw new UsageError(parsed.message);
  const names = new Set<string>();
  for (const region of parsed.value) {
    if (names.has(region.name)) throw new UsageError(`region "${region.name}" is listed twice`);
    names.add(region.name);
  }
  return parsed.value.map((r) => ({ ...r, url: r.url.replace(/\/+$/, "") }));
}

function parseThresholds(raw: string): Record<string, number> {
  const value = json(raw);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`must be an object of model name -> threshold, got ${JSON.stringify(raw)}`);
  }
  const parsed = parseOrDescribe(thresholdsSchema, value);
  if (!parsed.ok) throw new UsageError(parsed.message);
  return parsed.value;
}

/**
 * Everything the Worker reads from its variables and secrets, one row each (tools/cli/table.ts): the variable,
 * its type and bounds, default, unit and meaning. The options' types, the `Env` type of the vars, the parsing
 * and docs/edge.md's and README's tables (env.test.ts) come from it. Vars arrive as strings from secrets and
 * `--var`, or as JSON values from wrangler.toml; both read alike. Two defaults follow other rows
 * (`MAX_BUDGET_MS`, `BREAKER_MAX_COOLDOWN_MS`) and some values are checked against the bundle and the bindings:
 * `parseEnv` does that after the table, whatever the rows' order. The rows marked `simulation` are for local
 * stacks and tests only, never a deployed Worker (docs/edge.md, "Simulation").
 */
export const EDGE_SETTINGS = defineTable({
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
  apiKeys: {
    env: "API_KEYS",
    type: "string",
    defaultText: "unset",
    help: "secret: API keys, comma-separated or tenants' scoped keys as JSON (tenants/keys.ts); unset = open",
  },
  tenants: {
    env: "TENANTS",
    type: "string",
    defaultText: "`[]`",
    help: 'JSON array of tenants\' location limits and global quotas: `[{"tenant","rateLimiter"?,"quota"?: {"requests","per"}}]`',
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
  cacheTtlS: {
    env: "CACHE_TTL_S",
    type: "number",
    integer: true,
    min: 1,
    default: 300,
    unit: "s",
    help: "lifetime of a cached answer",
  },
  cacheEntries: {
    env: "CACHE_ENTRIES",
    type: "number",
    integer: true,
    min: 0,
    default: 10_000,
    unit: "entries",
    help: "most answers in the in-isolate cache",
  },
  cacheBytes: {
    env: "CACHE_BYTES",
    type: "number",
    integer: true,
    min: 0,
    default: 8 * 1024 * 1024,
    unit: "bytes",
    help: "most bytes of answers in the in-isolate cache (8 MiB)",
  },
  edgeSessionMemoryMb: {
    env: "EDGE_SESSION_MEMORY_MB",
    type: "number",
    min: 0.1,
    max: 96,
    default: 32,
    unit: "MiB",
    help: "memory the edge variants' sessions may be counted as in one isolate; past it the least recently used are released",
  },
  rateLimitPeriodS: {
    env: "RATE_LIMIT_PERIOD_S",
    type: "number",
    integer: true,
    min: 1,
    default: 60,
    unit: "s",
    help: "the RATE_LIMITER binding's period (10 or 60), sent as Retry-After",
  },
  quotaSlice: {
    env: "QUOTA_SLICE",
    type: "number",
    integer: true,
    min: 1,
    default: 100,
    unit: "requests",
    help: "requests of a tenant's global quota an isolate leases at a time (the error bound: docs/edge.md, Quotas)",
  },
  quotaLeaseS: {
    env: "QUOTA_LEASE_S",
    type: "number",
    min: 1,
    default: 60,
    unit: "s",
    help: "after this long a lease's unused requests go back to the tenant's quota",
  },
  quotaTimeoutMs: {
    env: "QUOTA_TIMEOUT_MS",
    type: "number",
    min: 1,
    default: 1000,
    unit: "ms",
    help: "how long a call to the TENANT_QUOTA object may take before the isolate fails open (serves, counted)",
  },
  corsOrigins: {
    env: "CORS_ORIGINS",
    type: "parsed",
    default: "*",
    help: 'origins allowed by CORS: "*" or a comma-separated list',
    parse(raw): string[] | "*" {
      const origins = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      return origins.length === 0 || origins.includes("*") ? "*" : origins;
    },
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
  modelRegistryPrefix: {
    env: "MODEL_REGISTRY_PREFIX",
    type: "parsed",
    default: "models",
    defaultText: "`models`",
    help: "with the MODEL_REGISTRY binding: where the model registry's tree starts in the R2 bucket (the pools' s3://BUCKET/PREFIX)",
    parse(raw): string {
      const prefix = raw.trim().replace(/^\/+|\/+$/g, "");
      if (!/^[\w./-]*$/.test(prefix) || prefix.split("/").some((p) => p === "." || p === "..")) {
        throw new UsageError(`must be a key prefix such as "models", got ${JSON.stringify(raw)}`);
      }
      return prefix;
    },
  },
  modelPublicKey: {
    env: "MODEL_PUBLIC_KEY",
    type: "parsed",
    defaultText: "unset",
    help: "Ed25519 public key (base64 of 32 bytes) the edge models must be signed with; unset: unsigned models load",
    parse(raw): string | undefined {
      if (raw.trim() === "") return undefined;
      if (!isPublicKeyText(raw)) {
        throw new UsageError("must be an Ed25519 public key, base64 of 32 bytes (npm run model -- keygen)");
      }
      return raw.trim();
    },
  },
  cascadeThresholds: {
    env: "CASCADE_THRESHOLDS",
    type: "parsed",
    default: {},
    defaultText: "`{}`",
    help: "cascade thresholds in [0, 1] by logical model name, replacing the calibrated ones",
    parse: parseThresholds,
  },
  traceSampleRatio: {
    env: "TRACE_SAMPLE_RATIO",
    type: "number",
    min: 0,
    max: 1,
    default: 0.01,
    help: "share of the traces the Worker starts itself that are sampled (the forward's traceparent flag)",
  },
  auditShare: {
    env: "AUDIT_SHARE",
    type: "number",
    min: 0,
    max: 1,
    default: 0.01,
    help: "share of edge answers re-asked of the nearest region off the request path (the live audit); 0 = none",
  },
  auditMaxPerSecond: {
    env: "AUDIT_MAX_PER_SECOND",
    type: "number",
    min: 0,
    default: 1,
    unit: "requests",
    help: "most audits one isolate sends per second",
  },
  allowLocationOverride: {
    env: "ALLOW_LOCATION_OVERRIDE",
    type: "boolean",
    simulation: true,
    help: "`x-edgecascade-location: <lat>,<lon>` stands in for `request.cf` (simulated client locations)",
  },
  localCacheOnly: {
    env: "LOCAL_CACHE_ONLY",
    type: "boolean",
    simulation: true,
    help: "answers stay in the isolate's LRU, never the Workers Cache API (local measurement runs)",
  },
  localPlatform: {
    env: "LOCAL_PLATFORM",
    type: "string",
    choices: ["memory"],
    defaultText: "unset",
    simulation: true,
    help: '"memory": in-isolate cache tier and rate limiter instead of the Cache API and RATE_LIMITER',
  },
  localRateLimit: {
    env: "LOCAL_RATE_LIMIT",
    type: "number",
    integer: true,
    min: 0,
    default: 0,
    unit: "requests",
    simulation: true,
    help: 'with LOCAL_PLATFORM "memory": requests per RATE_LIMIT_PERIOD_S per client (0: no limit)',
  },
  auditSeed: {
    env: "AUDIT_SEED",
    type: "number",
    integer: true,
    min: 0,
    defaultText: "unset",
    simulation: true,
    help: "a seed for the audit's draws: the same edge answers audited every run (tests); unset = Math.random",
  },
});

type Settings = FlagValues<typeof EDGE_SETTINGS>;

/**
 * The Worker's bindings: the table's variables (`[vars]` and secrets, as text or wrangler.toml's JSON values)
 * and the platform bindings.
 */
export type Env = TableVariables<typeof EDGE_SETTINGS> & {
  /**
   * Workers Analytics Engine dataset (`[[analytics_engine_datasets]]`): one data point per classify or infer
   * request and per audit (edge/analytics/); absent = none written.
   */
  ANALYTICS?: AnalyticsEngineDataset;
  /** Workers rate-limiting binding (`[[ratelimits]]`); absent = no rate limit. */
  RATE_LIMITER?: RateLimit;
  /**
   * Workers KV namespace where the cron leaves each region's readiness and served versions for every colo
   * (edge/region-status/store.ts); absent = no report is shared (each isolate learns from its own calls alone).
   */
  REGION_STATUS?: KVNamespace;
  /**
   * The tenants' global quotas (`[[durable_objects.bindings]]`, class `TenantQuota`, edge/tenants/quota-object.ts):
   * one object per tenant; absent = `TENANTS` may declare no quota.
   */
  TENANT_QUOTA?: DurableObjectNamespace;
  /**
   * The model registry's R2 bucket (`[[r2_buckets]]`, read-only token): edge variants newer than the bundle's are
   * loaded from it, and the cron copies its served states into REGION_STATUS (edge/registry/). Absent: the bundle's.
   */
  MODEL_REGISTRY?: R2Bucket;
};

/** Everything the Worker reads from its environment, parsed and checked once per isolate: the table's values, resolved. */
export type EdgeOptions = Omit<Settings, "apiKeys" | "tenants" | "maxBudgetMs" | "breakerMaxCooldownMs"> & {
  apiKeys: readonly TenantKey[];
  /** `TENANTS`, by tenant name (tenants/policies.ts). */
  tenantPolicies: ReadonlyMap<string, TenantPolicy>;
  maxBudgetMs: number;
  breakerMaxCooldownMs: number;
};

/** Variables that were renamed: a Worker still given the old name refuses to start rather than ignore it. */
const RENAMED: Readonly<Record<string, keyof Env>> = {
  PROBE_TIMEOUT_MS: "REGION_CHECK_TIMEOUT_MS",
  PROBE_MEMO_MS: "REGION_STATUS_MEMO_MS",
};

/** A setting that depends on another must not fall below it: the error names both. */
function atLeast(variable: string, value: number, floor: string, floorValue: number): number {
  if (value < floorValue) {
    throw new UsageError(
      `${variable}: must be at least ${floor} (${floorValue}), got ${JSON.stringify(String(value))}`,
    );
  }
  return value;
}

/**
 * The environment read against the table, then resolved against the Worker: the defaults that follow other
 * rows, API keys' and thresholds' models against those the Worker serves, regions' bindings against its
 * Fetchers. A mistake throws a `UsageError` naming the variable. `simulating`: the simulation settings on.
 */
export function parseEnv(env: Env, servedModels: readonly string[]): { options: EdgeOptions; simulating: string[] } {
  for (const [old, name] of Object.entries(RENAMED)) {
    const value = (env as Record<string, unknown>)[old];
    if (value !== undefined && value !== "") throw new UsageError(`${old}: renamed ${name}`);
  }
  const { values, simulating } = readTable(EDGE_SETTINGS, { env });
  const missing = missingBindings(values.regions, env);
  if (missing.length > 0) {
    throw new UsageError(`REGIONS: the Worker has no Fetcher binding ${missing.map((b) => `"${b}"`).join(", ")}`);
  }
  for (const name of Object.keys(values.cascadeThresholds)) {
    if (!servedModels.includes(name)) {
      throw new UsageError(
        `CASCADE_THRESHOLDS: the edge serves no model "${name}" (it serves ${servedModels.join(", ")})`,
      );
    }
  }
  const { tenants, ...rest } = values;
  const apiKeys = parseTenantKeys(values.apiKeys, servedModels);
  const bindings = env as Record<string, unknown>;
  const options: EdgeOptions = {
    ...rest,
    apiKeys,
    tenantPolicies: parseTenantPolicies(tenants, {
      tenants: [...new Set(apiKeys.flatMap((k) => (k.tenant ? [k.tenant] : [])))],
      hasRateLimiter: (name) => typeof (bindings[name] as RateLimit | undefined)?.limit === "function",
      hasQuotaObject: env.TENANT_QUOTA !== undefined,
    }),
    maxBudgetMs: atLeast(
      "MAX_BUDGET_MS",
      values.maxBudgetMs ?? Math.max(1000, values.sloBudgetMs),
      "SLO_BUDGET_MS",
      values.sloBudgetMs,
    ),
    breakerMaxCooldownMs: atLeast(
      "BREAKER_MAX_COOLDOWN_MS",
      values.breakerMaxCooldownMs ?? Math.max(300_000, values.breakerCooldownMs),
      "BREAKER_COOLDOWN_MS",
      values.breakerCooldownMs,
    ),
  };
  return { options, simulating };
}
