import * as v from "valibot";
import { parseOrDescribe } from "../../protocol/schema-message.ts";
import type { QuotaPer } from "./quota-period.ts";

/**
 * What a tenant is promised and held to at the edge (`TENANTS`), beyond its keys' scopes and per-key limits
 * (`API_KEYS`). Its class and reservation at the pools are the pools' configuration (`--tenants`).
 */
export interface TenantPolicy {
  tenant: string;
  /**
   * A `[[ratelimits]]` binding of the Worker that limits this tenant in each Cloudflare location, keyed by the
   * tenant (all its keys together); the binding's `simple.limit` per `simple.period` is the limit, so tenants with
   * different limits name different bindings.
   */
  rateLimiter?: string;
  /** A global quota: `requests` per calendar `per` (UTC), kept by the TENANT_QUOTA Durable Object. */
  quota?: { requests: number; per: QuotaPer };
}

const policySchema = v.strictObject({
  tenant: v.pipe(v.string(), v.regex(/^[\w.-]{1,64}$/, "must be 1-64 letters, digits, '.', '_' or '-'")),
  rateLimiter: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_]\w{0,63}$/, "must be a binding name"))),
  quota: v.optional(
    v.strictObject({
      requests: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1")),
      per: v.picklist(["day", "month"]),
    }),
  ),
});

/** What the policies are checked against: the tenants of `API_KEYS`, and the Worker's bindings. */
export interface PolicyContext {
  tenants: readonly string[];
  /** Whether the Worker has a rate-limiting binding of this name. */
  hasRateLimiter(name: string): boolean;
  /** Whether the Worker has the TENANT_QUOTA Durable Object binding. */
  hasQuotaObject: boolean;
}

/**
 * `TENANTS`: a JSON array of `{"tenant", "rateLimiter"?, "quota"?: {"requests", "per": "day" | "month"}}`, one
 * per tenant, by name. A tenant no API key has, a binding the Worker lacks, or a quota without the Durable Object
 * binding is an error naming the field (`TENANTS[0].rateLimiter`), so that a typo never leaves a tenant unlimited.
 */
export function parseTenantPolicies(raw: unknown, context: PolicyContext): ReadonlyMap<string, TenantPolicy> {
  if (raw === undefined || raw === "") return new Map();
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new Error(`TENANTS: invalid JSON: ${(err as Error).message}`);
    }
  }
  if (!Array.isArray(value)) throw new Error("TENANTS: must be a JSON array of tenants");
  const parsed = parseOrDescribe(v.array(policySchema), value);
  if (!parsed.ok) throw new Error(`TENANTS: ${parsed.message.replace(/"(\d+)(\.|")/g, '"[$1]$2')}`);
  const policies = new Map<string, TenantPolicy>();
  for (const [i, entry] of parsed.value.entries()) {
    if (policies.has(entry.tenant)) throw new Error(`TENANTS[${i}].tenant: "${entry.tenant}" is listed twice`);
    if (!context.tenants.includes(entry.tenant)) {
      const known = context.tenants.length > 0 ? context.tenants.map((t) => `"${t}"`).join(", ") : "none";
      throw new Error(`TENANTS[${i}].tenant: no API key has tenant "${entry.tenant}" (API_KEYS' tenants: ${known})`);
    }
    if (entry.rateLimiter !== undefined && !context.hasRateLimiter(entry.rateLimiter)) {
      throw new Error(`TENANTS[${i}].rateLimiter: the Worker has no rate-limiting binding "${entry.rateLimiter}"`);
    }
    if (entry.quota !== undefined && !context.hasQuotaObject) {
      throw new Error(`TENANTS[${i}].quota: the Worker has no TENANT_QUOTA Durable Object binding`);
    }
    policies.set(entry.tenant, entry);
  }
  return policies;
}
