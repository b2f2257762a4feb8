import * as v from "valibot";
import { isPublicKeyText } from "../protocol/model-signature.ts";
import { parseOrDescribe } from "../protocol/schema-message.ts";
import { missingBindings } from "./forward/region-transport.ts";
import type { Region } from "./regions/region.ts";
import { parseTenantKeys, type TenantKey } from "./tenants/keys.ts";

/**
 * The Worker's bindings: `[vars]` and secrets from wrangler.toml, and the platform bindings. Vars arrive as
 * strings from secrets and `--var`, or as JSON values from wrangler.toml, so every tunable accepts both. What
 * each var means, its default and unit: its row in `SETTINGS` / `SIMULATION_SETTINGS` below (docs/edge.md's
 * tables are checked against them).
 */
export interface Env {
  REGIONS?: string | unknown[];
  REGIONAL_SHARED_SECRET?: string;
  API_KEYS?: string;
  SLO_BUDGET_MS?: string | number;
  MAX_BUDGET_MS?: string | number;
  RTT_RESERVE_MAX_SHARE?: string | number;
  WARM_PROBE_INTERVAL_MS?: string | number;
  REACH_QUANTILE?: string | number;
  HEDGE_DELAY_MS?: string | number;
  HEDGE_BUDGET_RATIO?: string | number;
  HEDGE_BUDGET_BURST?: string | number;
  BREAKER_FAILURES?: string | number;
  BREAKER_COOLDOWN_MS?: string | number;
  BREAKER_MAX_COOLDOWN_MS?: string | number;
  CACHE_TTL_S?: string | number;
  CACHE_ENTRIES?: string | number;
  CACHE_BYTES?: string | number;
  RATE_LIMIT_PERIOD_S?: string | number;
  CORS_ORIGINS?: string;
  REGION_CHECK_TIMEOUT_MS?: string | number;
  REGION_STATUS_MEMO_MS?: string | number;
  MODEL_PUBLIC_KEY?: string;
  CASCADE_THRESHOLDS?: string | Record<string, unknown>;
  ALLOW_LOCATION_OVERRIDE?: string | boolean;
  LOCAL_CACHE_ONLY?: string | boolean;
  LOCAL_PLATFORM?: string;
  LOCAL_RATE_LIMIT?: string | number;
  /** Workers rate-limiting binding (`[[ratelimits]]`); absent = no rate limit. */
  RATE_LIMITER?: RateLimit;
  /**
   * Workers KV namespace where the cron leaves each region's readiness and served versions for every colo
   * (edge/region-status/store.ts); absent = no report is shared (each isolate learns from its own calls alone).
   */
  REGION_STATUS?: KVNamespace;
}

/** Everything the Worker reads from its environment, parsed and checked once per isolate: one field per row of `SETTINGS` and `SIMULATION_SETTINGS`. */
export interface EdgeOptions {
  regions: Region[];
  sharedSecret: string | undefined;
  apiKeys: readonly TenantKey[];
  sloBudgetMs: number;
  maxBudgetMs: number;
  rttReserveMaxShare: number;
  warmProbeIntervalMs: number;
  reachQuantile: number;
  hedgeDelayMs: number;
  hedgeBudgetRatio: number;
  hedgeBudgetBurst: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  breakerMaxCooldownMs: number;
  cacheTtlS: number;
  cacheEntries: number;
  cacheBytes: number;
  rateLimitPeriodS: number;
  corsOrigins: string[] | "*";
  regionCheckTimeoutMs: number;
  regionStatusMemoMs: number;
  modelPublicKey: string | undefined;
  cascadeThresholds: Readonly<Record<string, number>>;
  allowLocationOverride: boolean;
  localCacheOnly: boolean;
  /** In-isolate cache tier and rate limiter (LOCAL_PLATFORM "memory"), with the limiter's requests per period. */
  localPlatform: { rateLimit: number } | undefined;
}

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

function parseRegions(raw: Env["REGIONS"]): Region[] {
  if (raw === undefined || raw === "") return [];
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new Error(`REGIONS: invalid JSON: ${(err as Error).message}`);
    }
  }
  const parsed = parseOrDescribe(regionsSchema, value);
  if (!parsed.ok) throw new Error(`REGIONS: ${parsed.message}`);
  const names = new Set<string>();
  for (const region of parsed.value) {
    if (names.has(region.name)) throw new Error(`REGIONS: region "${region.name}" is listed twice`);
    names.add(region.name);
  }
  return parsed.value.map((r) => ({ ...r, url: r.url.replace(/\/+$/, "") }));
}

const thresholdsSchema = v.record(
  v.string(),
  v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]")),
);

function parseThresholds(raw: Env["CASCADE_THRESHOLDS"], servedModels: readonly string[]): Record<string, number> {
  if (raw === undefined || raw === "") return {};
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new Error(`CASCADE_THRESHOLDS: invalid JSON: ${(err as Error).message}`);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`CASCADE_THRESHOLDS: must be an object of model name -> threshold, got ${JSON.stringify(raw)}`);
  }
  const parsed = parseOrDescribe(thresholdsSchema, value);
  if (!parsed.ok) throw new Error(`CASCADE_THRESHOLDS: ${parsed.message}`);
  for (const name of Object.keys(parsed.value)) {
    if (!servedModels.includes(name)) {
      throw new Error(`CASCADE_THRESHOLDS: the edge serves no model "${name}" (it serves ${servedModels.join(", ")})`);
    }
  }
  return parsed.value;
}

/** What a row's parse sees besides its own raw value: the whole environment, the served models, the rows parsed before it. */
interface ParseContext {
  env: Env;
  servedModels: readonly string[];
  parsed: Partial<EdgeOptions>;
}

/** One row of the configuration table: a variable, its default as docs/edge.md writes it, its unit, and how it is read. */
export interface Setting<T> {
  variable: keyof Env;
  /** The default as the docs' tables write it (checked by env.test.ts). */
  shownDefault: string;
  unit?: "ms" | "s" | "bytes" | "entries" | "requests";
  /** One line: what the setting decides. */
  doc: string;
  /** Raw value (undefined or "" when unset) to the option; throws an Error naming the variable. */
  parse(raw: unknown, context: ParseContext): T;
}

type Settings<K extends keyof EdgeOptions> = { [F in K]: Setting<EdgeOptions[F]> };

function unset(raw: unknown): raw is undefined | "" {
  return raw === undefined || raw === "";
}

/**
 * A number setting: `fallback` when unset (a function of the rows before it where the default depends on
 * them), else a finite number in range; the range's minimum may depend on earlier rows too.
 */
function numberSetting(row: {
  variable: keyof Env;
  default: number | ((parsed: Partial<EdgeOptions>) => number);
  shownDefault?: string;
  unit?: Setting<number>["unit"];
  doc: string;
  min: number | ((parsed: Partial<EdgeOptions>) => number);
  max?: number;
  integer?: boolean;
}): Setting<number> {
  return {
    variable: row.variable,
    shownDefault: row.shownDefault ?? `\`${row.default}\``,
    ...(row.unit ? { unit: row.unit } : {}),
    doc: row.doc,
    parse(raw, { parsed }) {
      if (unset(raw)) return typeof row.default === "function" ? row.default(parsed) : row.default;
      const min = typeof row.min === "function" ? row.min(parsed) : row.min;
      const value = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : Number.NaN;
      const range = row.max === undefined ? `>= ${min}` : `in [${min}, ${row.max}]`;
      const kind = row.integer ? "an integer" : "a number";
      if (
        !Number.isFinite(value) ||
        (row.integer && !Number.isInteger(value)) ||
        value < min ||
        (row.max !== undefined && value > row.max)
      ) {
        throw new Error(`${row.variable}: must be ${kind} ${range}, got ${JSON.stringify(raw)}`);
      }
      return value;
    },
  };
}

/** A "true"/"false" setting, false when unset. */
function flagSetting(variable: keyof Env, doc: string): Setting<boolean> {
  return {
    variable,
    shownDefault: "`false`",
    doc,
    parse(raw) {
      if (unset(raw) || raw === false || raw === "false") return false;
      if (raw === true || raw === "true") return true;
      throw new Error(`${variable}: must be "true" or "false", got ${JSON.stringify(raw)}`);
    },
  };
}

function list(raw: unknown): string[] {
  return (typeof raw === "string" ? raw : "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** The production settings, in docs/edge.md's order. */
export const SETTINGS: Settings<Exclude<keyof EdgeOptions, keyof typeof SIMULATION_SETTINGS>> = {
  regions: {
    variable: "REGIONS",
    shownDefault: "`[]`",
    doc: 'JSON array of regions: `[{"name","url","latitude","longitude","continent"?,"colos"?,"binding"?}]`',
    parse(raw, { env }) {
      const regions = parseRegions(raw as Env["REGIONS"]);
      const missing = missingBindings(regions, env);
      if (missing.length > 0) {
        throw new Error(`REGIONS: the Worker has no Fetcher binding ${missing.map((b) => `"${b}"`).join(", ")}`);
      }
      return regions;
    },
  },
  sharedSecret: {
    variable: "REGIONAL_SHARED_SECRET",
    shownDefault: "unset",
    doc: "secret: HMAC key for edge->regional calls; unset = calls go unsigned",
    parse: (raw) => (typeof raw === "string" && raw !== "" ? raw : undefined),
  },
  apiKeys: {
    variable: "API_KEYS",
    shownDefault: "unset",
    doc: "secret: API keys, comma-separated or tenants' scoped keys as JSON (tenants/keys.ts); unset = open",
    parse: (raw, { servedModels }) => parseTenantKeys(raw as Env["API_KEYS"], servedModels),
  },
  sloBudgetMs: numberSetting({
    variable: "SLO_BUDGET_MS",
    default: 10,
    unit: "ms",
    doc: "time a request may take end to end, at the client; less the client's round trip, the regions' deadline",
    min: 1,
  }),
  maxBudgetMs: numberSetting({
    variable: "MAX_BUDGET_MS",
    default: (parsed) => Math.max(1000, parsed.sloBudgetMs!),
    shownDefault: "`max(1000, SLO_BUDGET_MS)`",
    unit: "ms",
    doc: "most a client may ask for with `x-edgecascade-budget-ms` (higher is capped)",
    min: (parsed) => parsed.sloBudgetMs!,
  }),
  rttReserveMaxShare: numberSetting({
    variable: "RTT_RESERVE_MAX_SHARE",
    default: 0.5,
    doc: "most of a budget kept back for the client's round trip (the regions keep the rest); 0 = none",
    min: 0,
    max: 0.9,
  }),
  warmProbeIntervalMs: numberSetting({
    variable: "WARM_PROBE_INTERVAL_MS",
    default: 3000,
    unit: "ms",
    doc: "least time between two warm probes of one region by one isolate",
    min: 1,
  }),
  reachQuantile: numberSetting({
    variable: "REACH_QUANTILE",
    default: 0.9,
    doc: "quantile of a region's own answer times that budget-aware routing compares with the budget left",
    min: 0,
    max: 1,
  }),
  hedgeDelayMs: numberSetting({
    variable: "HEDGE_DELAY_MS",
    default: 5,
    unit: "ms",
    doc: "hedge delay before a region has enough latency samples (half the default budget)",
    min: 0,
  }),
  hedgeBudgetRatio: numberSetting({
    variable: "HEDGE_BUDGET_RATIO",
    default: 0.1,
    doc: "hedges per forwarded request, long run",
    min: 0,
    max: 1,
  }),
  hedgeBudgetBurst: numberSetting({
    variable: "HEDGE_BUDGET_BURST",
    default: 5,
    doc: "hedges that may be spent back to back (token bucket size)",
    min: 0,
  }),
  breakerFailures: numberSetting({
    variable: "BREAKER_FAILURES",
    default: 5,
    doc: "consecutive failures or timeouts that open a region's breaker (Envoy's consecutive_5xx)",
    min: 1,
    integer: true,
  }),
  breakerCooldownMs: numberSetting({
    variable: "BREAKER_COOLDOWN_MS",
    default: 30_000,
    unit: "ms",
    doc: "cool-down before the half-open trial call; grows linearly with repeated ejections",
    min: 1,
  }),
  breakerMaxCooldownMs: numberSetting({
    variable: "BREAKER_MAX_COOLDOWN_MS",
    default: (parsed) => Math.max(300_000, parsed.breakerCooldownMs!),
    shownDefault: "`max(300000, BREAKER_COOLDOWN_MS)`",
    unit: "ms",
    doc: "longest cool-down",
    min: (parsed) => parsed.breakerCooldownMs!,
  }),
  cacheTtlS: numberSetting({
    variable: "CACHE_TTL_S",
    default: 300,
    unit: "s",
    doc: "lifetime of a cached answer",
    min: 1,
    integer: true,
  }),
  cacheEntries: numberSetting({
    variable: "CACHE_ENTRIES",
    default: 10_000,
    unit: "entries",
    doc: "most answers in the in-isolate cache",
    min: 0,
    integer: true,
  }),
  cacheBytes: numberSetting({
    variable: "CACHE_BYTES",
    default: 8 * 1024 * 1024,
    unit: "bytes",
    doc: "most bytes of answers in the in-isolate cache (8 MiB)",
    min: 0,
    integer: true,
  }),
  rateLimitPeriodS: numberSetting({
    variable: "RATE_LIMIT_PERIOD_S",
    default: 60,
    unit: "s",
    doc: "the RATE_LIMITER binding's period (10 or 60), sent as Retry-After",
    min: 1,
    integer: true,
  }),
  corsOrigins: {
    variable: "CORS_ORIGINS",
    shownDefault: "`*`",
    doc: 'origins allowed by CORS: "*" or a comma-separated list',
    parse(raw) {
      const origins = list(raw);
      return origins.length === 0 || origins.includes("*") ? "*" : origins;
    },
  },
  regionCheckTimeoutMs: numberSetting({
    variable: "REGION_CHECK_TIMEOUT_MS",
    default: 2000,
    unit: "ms",
    doc: "timeout of each scheduled status check call, and the deadline of a warm probe's classify",
    min: 1,
  }),
  regionStatusMemoMs: numberSetting({
    variable: "REGION_STATUS_MEMO_MS",
    default: 5000,
    unit: "ms",
    doc: "how long a request isolate reuses the stored region status report",
    min: 0,
  }),
  modelPublicKey: {
    variable: "MODEL_PUBLIC_KEY",
    shownDefault: "unset",
    doc: "Ed25519 public key (base64 of 32 bytes) the edge models must be signed with; unset: unsigned models load",
    parse(raw) {
      if (typeof raw !== "string" || raw.trim() === "") return undefined;
      if (!isPublicKeyText(raw)) {
        throw new Error(
          "MODEL_PUBLIC_KEY: must be an Ed25519 public key, base64 of 32 bytes (npm run model -- keygen)",
        );
      }
      return raw.trim();
    },
  },
  cascadeThresholds: {
    variable: "CASCADE_THRESHOLDS",
    shownDefault: "`{}`",
    doc: "cascade thresholds in [0, 1] by logical model name, replacing the calibrated ones",
    parse: (raw, { servedModels }) => parseThresholds(raw as Env["CASCADE_THRESHOLDS"], servedModels),
  },
};

/**
 * Simulation: settings for local stacks and tests only, never a deployed Worker. Any of them on makes the
 * Worker log `simulationWarning` once per isolate.
 */
export const SIMULATION_SETTINGS: Settings<"allowLocationOverride" | "localCacheOnly" | "localPlatform"> = {
  allowLocationOverride: flagSetting(
    "ALLOW_LOCATION_OVERRIDE",
    "`x-edgecascade-location: <lat>,<lon>` stands in for `request.cf` (simulated client locations)",
  ),
  localCacheOnly: flagSetting(
    "LOCAL_CACHE_ONLY",
    "answers stay in the isolate's LRU, never the Workers Cache API (local measurement runs)",
  ),
  localPlatform: {
    variable: "LOCAL_PLATFORM",
    shownDefault: "unset",
    doc: '"memory": in-isolate cache tier and rate limiter instead of the Cache API and RATE_LIMITER',
    parse(raw, context) {
      if (unset(raw)) return undefined;
      if (raw !== "memory") throw new Error(`LOCAL_PLATFORM: must be "memory" or unset, got ${JSON.stringify(raw)}`);
      return { rateLimit: LOCAL_RATE_LIMIT.parse(context.env.LOCAL_RATE_LIMIT, context) };
    },
  },
};

/** With LOCAL_PLATFORM "memory": requests per RATE_LIMIT_PERIOD_S per client, as the binding's `limit`; 0: none. */
export const LOCAL_RATE_LIMIT = numberSetting({
  variable: "LOCAL_RATE_LIMIT",
  default: 0,
  unit: "requests",
  doc: 'with LOCAL_PLATFORM "memory": requests per RATE_LIMIT_PERIOD_S per client (0: no limit)',
  min: 0,
  integer: true,
});

/** Variables that were renamed: a Worker still given the old name refuses to start rather than ignore it. */
const RENAMED: Readonly<Record<string, keyof Env>> = {
  PROBE_TIMEOUT_MS: "REGION_CHECK_TIMEOUT_MS",
  PROBE_MEMO_MS: "REGION_STATUS_MEMO_MS",
};

/** Parse and check the environment against the models the Worker serves, row by row; the error names the variable. */
export function parseEnv(env: Env, servedModels: readonly string[]): EdgeOptions {
  for (const [old, name] of Object.entries(RENAMED)) {
    if (!unset((env as Record<string, unknown>)[old])) throw new Error(`${old}: renamed ${name}`);
  }
  const parsed: Partial<EdgeOptions> = {};
  const context = { env, servedModels, parsed };
  for (const [field, setting] of Object.entries({ ...SETTINGS, ...SIMULATION_SETTINGS })) {
    (parsed as Record<string, unknown>)[field] = (setting as Setting<unknown>).parse(env[setting.variable], context);
  }
  return parsed as EdgeOptions;
}

/** The loud line a Worker with any simulation setting on logs once per isolate; undefined when none is on. */
export function simulationWarning(options: EdgeOptions): string | undefined {
  const on = [
    options.allowLocationOverride ? "ALLOW_LOCATION_OVERRIDE=true" : undefined,
    options.localCacheOnly ? "LOCAL_CACHE_ONLY=true" : undefined,
    options.localPlatform ? `LOCAL_PLATFORM=memory (LOCAL_RATE_LIMIT=${options.localPlatform.rateLimit})` : undefined,
  ].filter((s) => s !== undefined);
  if (on.length === 0) return undefined;
  return `SIMULATION SETTINGS ON (${on.join(", ")}): for local stacks and tests only, never a deployed Worker`;
}
