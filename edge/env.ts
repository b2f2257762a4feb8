import * as v from "valibot";
import { isPublicKeyText } from "../protocol/model-signature.ts";
import { parseOrDescribe } from "../protocol/schema-message.ts";
import { missingBindings } from "./forward/region-transport.ts";
import type { Region } from "./regions/region.ts";
import { parseTenantKeys, type TenantKey } from "./tenants/keys.ts";

/**
 * The Worker's bindings: `[vars]` and secrets from wrangler.toml (docs/edge.md lists them all) and the
 * rate-limiting binding. Vars arrive as strings from secrets and `--var`, or as JSON values from
 * wrangler.toml, so every tunable accepts both.
 */
export interface Env {
  /** JSON array of regions: `[{"name","url","latitude","longitude","continent"?,"colos"?,"binding"?}]`. */
  REGIONS?: string | unknown[];
  /** Secret: HMAC key for edge->regional calls; unset = calls go unsigned. */
  REGIONAL_SHARED_SECRET?: string;
  /**
   * Secret: API keys; empty or unset = open. Comma-separated keys (every model), or a JSON array of
   * `{"key", "tenant"?, "models"?, "rateLimit"?: {"requests", "periodS"}}` (see tenants/keys.ts).
   */
  API_KEYS?: string;
  /** "true" lets `x-edgecascade-location: <lat>,<lon>` stand in for `request.cf` (local stack only). */
  ALLOW_LOCATION_OVERRIDE?: string | boolean;
  SLO_BUDGET_MS?: string | number;
  MAX_BUDGET_MS?: string | number;
  WARM_PROBE_INTERVAL_MS?: string | number;
  HEDGE_DELAY_MS?: string | number;
  HEDGE_BUDGET_RATIO?: string | number;
  HEDGE_BUDGET_BURST?: string | number;
  BREAKER_FAILURES?: string | number;
  BREAKER_COOLDOWN_MS?: string | number;
  BREAKER_MAX_COOLDOWN_MS?: string | number;
  CACHE_TTL_S?: string | number;
  CACHE_ENTRIES?: string | number;
  CACHE_BYTES?: string | number;
  /** "true": answers stay in the isolate's LRU, never the Workers Cache API (local measurement runs). */
  LOCAL_CACHE_ONLY?: string | boolean;
  RATE_LIMIT_PERIOD_S?: string | number;
  CORS_ORIGINS?: string;
  PROBE_TIMEOUT_MS?: string | number;
  PROBE_MEMO_MS?: string | number;
  /** Ed25519 public key (base64 of 32 bytes) the edge models must be signed with; unset: unsigned models load. */
  MODEL_PUBLIC_KEY?: string;
  /** JSON object: logical model name -> cascade threshold in [0, 1] replacing the calibrated one. */
  CASCADE_THRESHOLDS?: string | Record<string, unknown>;
  /** Workers rate-limiting binding (`[[ratelimits]]`); absent = no rate limit. */
  RATE_LIMITER?: RateLimit;
  /**
   * Workers KV namespace where the cron leaves each region's readiness and served versions for every colo
   * (edge/region-status/store.ts); absent = no report is shared (each isolate learns from its own calls alone).
   */
  REGION_STATUS?: KVNamespace;
  /**
   * "memory" (the local stack only): the response cache's shared tier and the rate limiter are in-isolate
   * implementations instead of the Cache API and RATE_LIMITER, whose Miniflare simulations cost the local stack
   * milliseconds per request that Cloudflare does not (docs/edge.md, "Running locally"). Never set deployed.
   */
  LOCAL_PLATFORM?: string;
  /** With LOCAL_PLATFORM "memory": requests per RATE_LIMIT_PERIOD_S per client, as the binding's `limit`. */
  LOCAL_RATE_LIMIT?: string | number;
}

/** Everything the Worker reads from its environment, parsed and checked once per isolate. */
export interface EdgeOptions {
  regions: Region[];
  sharedSecret: string | undefined;
  /** Accepted API keys with their tenants and scopes; empty = no key needed. */
  apiKeys: readonly TenantKey[];
  allowLocationOverride: boolean;
  /** Time a request may take end to end, in ms; what is left of it is the regional deadline. Default 10. */
  sloBudgetMs: number;
  /** Most a client may ask for with `x-edgecascade-budget-ms` (higher is capped), in ms. Default 1000. */
  maxBudgetMs: number;
  /** Least time between two warm probes of one region by one isolate, in ms. Default 3000. */
  warmProbeIntervalMs: number;
  /** Hedge delay before a region has enough latency samples, in ms. Default 5 (half the default budget). */
  hedgeDelayMs: number;
  /** Hedges per forwarded request, long run. Default 0.1. */
  hedgeBudgetRatio: number;
  /** Hedges that may be spent back to back (token bucket size). Default 5. */
  hedgeBudgetBurst: number;
  /** Consecutive failures or timeouts that open a region's breaker. Default 5 (Envoy's consecutive_5xx). */
  breakerFailures: number;
  /** Cool-down before the half-open probe, in ms; grows linearly with repeated ejections. Default 30000. */
  breakerCooldownMs: number;
  /** Longest cool-down, in ms. Default 300000. */
  breakerMaxCooldownMs: number;
  /** Lifetime of a cached answer, in seconds. Default 300. */
  cacheTtlS: number;
  /** Most answers in the in-isolate cache. Default 10000. */
  cacheEntries: number;
  /** Most bytes of answers in the in-isolate cache. Default 8 MiB. */
  cacheBytes: number;
  /** Skip the Workers Cache API (the colo's shared tier). Default false. */
  localCacheOnly: boolean;
  /** In-isolate cache tier and rate limiter (LOCAL_PLATFORM "memory"), with the limiter's requests per period. */
  localPlatform: { rateLimit: number } | undefined;
  /** The RATE_LIMITER binding's period in seconds (10 or 60), sent as Retry-After. Default 60. */
  rateLimitPeriodS: number;
  /** Origins allowed by CORS: "*" or a comma-separated list. Default "*". */
  corsOrigins: string[] | "*";
  /** Timeout of each scheduled status check call (and of a warm probe's), in ms. Default 2000. */
  probeTimeoutMs: number;
  /** How long a request isolate reuses the stored probe results, in ms. Default 5000. */
  probeMemoMs: number;
  /** The key edge models must be signed with; undefined: unsigned models load (and the Worker says so). */
  modelPublicKey: string | undefined;
  /**
   * Cascade thresholds replacing the calibrated ones, by logical model name (e.g. `{"digits": 0.9}`), to trade
   * accuracy for edge share; a model not listed keeps its calibrated threshold. Default `{}`.
   */
  cascadeThresholds: Readonly<Record<string, number>>;
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

function number(
  env: Env,
  name: keyof Env,
  fallback: number,
  check: { min: number; max?: number; integer?: boolean },
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : Number.NaN;
  const range = check.max === undefined ? `>= ${check.min}` : `in [${check.min}, ${check.max}]`;
  const kind = check.integer ? "an integer" : "a number";
  if (
    !Number.isFinite(value) ||
    (check.integer && !Number.isInteger(value)) ||
    value < check.min ||
    (check.max !== undefined && value > check.max)
  ) {
    throw new Error(`${name}: must be ${kind} ${range}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function flag(env: Env, name: keyof Env): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === false || raw === "false") return false;
  if (raw === true || raw === "true") return true;
  throw new Error(`${name}: must be "true" or "false", got ${JSON.stringify(raw)}`);
}

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function publicKey(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!isPublicKeyText(raw)) {
    throw new Error("MODEL_PUBLIC_KEY: must be an Ed25519 public key, base64 of 32 bytes (npm run model -- keygen)");
  }
  return raw.trim();
}

function localPlatform(env: Env): EdgeOptions["localPlatform"] {
  const raw = env.LOCAL_PLATFORM;
  if (raw === undefined || raw === "") return undefined;
  if (raw !== "memory") throw new Error(`LOCAL_PLATFORM: must be "memory" or unset, got ${JSON.stringify(raw)}`);
  return { rateLimit: number(env, "LOCAL_RATE_LIMIT", 0, { min: 0, integer: true }) };
}

/** Parse and check the environment against the models the Worker serves; the error names the variable. */
export function parseEnv(env: Env, servedModels: readonly string[]): EdgeOptions {
  const origins = list(env.CORS_ORIGINS);
  const regions = parseRegions(env.REGIONS);
  const missing = missingBindings(regions, env);
  if (missing.length > 0) {
    throw new Error(`REGIONS: the Worker has no Fetcher binding ${missing.map((b) => `"${b}"`).join(", ")}`);
  }
  const breakerCooldownMs = number(env, "BREAKER_COOLDOWN_MS", 30_000, { min: 1 });
  const sloBudgetMs = number(env, "SLO_BUDGET_MS", 10, { min: 1 });
  return {
    regions,
    sharedSecret: env.REGIONAL_SHARED_SECRET || undefined,
    apiKeys: parseTenantKeys(env.API_KEYS, servedModels),
    allowLocationOverride: flag(env, "ALLOW_LOCATION_OVERRIDE"),
    sloBudgetMs,
    maxBudgetMs: number(env, "MAX_BUDGET_MS", Math.max(1000, sloBudgetMs), { min: sloBudgetMs }),
    warmProbeIntervalMs: number(env, "WARM_PROBE_INTERVAL_MS", 3000, { min: 1 }),
    hedgeDelayMs: number(env, "HEDGE_DELAY_MS", 5, { min: 0 }),
    hedgeBudgetRatio: number(env, "HEDGE_BUDGET_RATIO", 0.1, { min: 0, max: 1 }),
    hedgeBudgetBurst: number(env, "HEDGE_BUDGET_BURST", 5, { min: 0 }),
    breakerFailures: number(env, "BREAKER_FAILURES", 5, { min: 1, integer: true }),
    breakerCooldownMs,
    breakerMaxCooldownMs: number(env, "BREAKER_MAX_COOLDOWN_MS", Math.max(300_000, breakerCooldownMs), {
      min: breakerCooldownMs,
    }),
    cacheTtlS: number(env, "CACHE_TTL_S", 300, { min: 1, integer: true }),
    cacheEntries: number(env, "CACHE_ENTRIES", 10_000, { min: 0, integer: true }),
    cacheBytes: number(env, "CACHE_BYTES", 8 * 1024 * 1024, { min: 0, integer: true }),
    localCacheOnly: flag(env, "LOCAL_CACHE_ONLY"),
    localPlatform: localPlatform(env),
    rateLimitPeriodS: number(env, "RATE_LIMIT_PERIOD_S", 60, { min: 1, integer: true }),
    corsOrigins: origins.length === 0 || origins.includes("*") ? "*" : origins,
    probeTimeoutMs: number(env, "PROBE_TIMEOUT_MS", 2000, { min: 1 }),
    probeMemoMs: number(env, "PROBE_MEMO_MS", 5000, { min: 0 }),
    modelPublicKey: publicKey(env.MODEL_PUBLIC_KEY),
    cascadeThresholds: parseThresholds(env.CASCADE_THRESHOLDS, servedModels),
  };
}
