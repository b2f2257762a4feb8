import { defineTable } from "../../tools/cli/table.ts";

/** Who may call the Worker and how much: API keys, tenants, rate limits, global quotas, CORS. */
export const CLIENT_SETTINGS = defineTable({
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
});
