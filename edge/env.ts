import { UsageError } from "../tools/cli/errors.ts";
import { type FlagValues, readTable, type TableVariables } from "../tools/cli/table.ts";
import { missingBindings } from "./forward/region-transport.ts";
import { EDGE_SETTINGS } from "./settings/table.ts";
import { parseTenantKeys, type TenantKey } from "./tenants/keys.ts";
import { parseTenantPolicies, type TenantPolicy } from "./tenants/policies.ts";

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
