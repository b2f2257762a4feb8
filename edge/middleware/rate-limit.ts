import type { MiddlewareHandler } from "hono";
import { RateLimited } from "../../protocol/errors.ts";
import { QUOTA_HEADER } from "../../protocol/headers.ts";
import type { AppEnv } from "../app-env.ts";
import type { TenantQuotas } from "../tenants/tenant-quotas.ts";
import type { Caller } from "./api-key.ts";

/** A tenant's own limits (`TENANTS`): its per-location rate-limiting binding, and the global quotas. */
export interface TenantLimits {
  /** The binding each tenant with a `rateLimiter` is limited by, keyed by tenant name. */
  limiters: ReadonlyMap<string, RateLimit>;
  quotas: TenantQuotas;
}

/** Whether `checkTenantLimits` has anything to check for this tenant. */
export function hasTenantLimits(limits: TenantLimits, tenant: string): boolean {
  return limits.limiters.has(tenant) || limits.quotas.has(tenant);
}

/**
 * The tenant's own limits, after the client's: its location-wide limit (its `rateLimiter` binding, keyed
 * `tenant:<name>`, so all its keys count together; 429 with Retry-After the binding's period), then, for an
 * inference request (`countsAgainstQuota`), its global quota (tenants/tenant-quotas.ts; 429 `quota_exceeded`).
 * `unmetered` when the quota could not be checked (its object unreachable: served anyway, counted).
 */
export async function checkTenantLimits(
  limits: TenantLimits,
  tenant: string,
  options: { periodS: number; countsAgainstQuota: boolean; defer: (work: Promise<void>) => void },
): Promise<"metered" | "unmetered"> {
  const limiter = limits.limiters.get(tenant);
  if (limiter) {
    const { success } = await limiter.limit({ key: `tenant:${tenant}` });
    if (!success) throw new RateLimited(`rate limit of tenant "${tenant}" exceeded in this location`, options.periodS);
  }
  if (!options.countsAgainstQuota) return "metered";
  return limits.quotas.take(tenant, options.defer);
}

/** Whether `checkRateLimits` has anything to check for this caller: a limiter binding or the key's own limit. */
export function hasRateLimits(limiter: RateLimit | undefined, caller: Caller): boolean {
  return limiter !== undefined || caller.tenant.window !== undefined;
}

/**
 * Per-client rate limit with the Workers rate-limiting binding (`RATE_LIMITER`, `[[ratelimits]]` in
 * wrangler.toml): over the limit is a 429 whose Retry-After is the binding's period (the binding does not
 * say when its window resets). Without the binding there is no such limit. A key with a limit of its own
 * (`API_KEYS`' `rateLimit`) is also held to that, per isolate, with Retry-After the end of its window.
 */
export async function checkRateLimits(limiter: RateLimit | undefined, caller: Caller, periodS: number): Promise<void> {
  if (limiter) {
    const { success } = await limiter.limit({ key: caller.client });
    if (!success) {
      const who = caller.client.startsWith("key:") ? "API key" : "client address";
      throw new RateLimited(`rate limit exceeded for this ${who}`, periodS);
    }
  }
  const { window, name } = caller.tenant;
  if (window) {
    const taken = window.take(Date.now());
    if (!taken.ok) throw new RateLimited(`rate limit of tenant "${name}"'s API key exceeded`, taken.retryAfterS);
  }
}

/**
 * `checkRateLimits`, then `checkTenantLimits`, for the caller `apiKey` named (it runs after it). Inference
 * requests (the POSTs) count against the tenant's quota; an answer served unmetered says so in
 * `x-edgecascade-quota`.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimit(c, next) {
    const caller = { client: c.get("client"), tenant: c.get("tenant") };
    const rt = c.get("runtime");
    await checkRateLimits(rt.rateLimiter, caller, rt.options.rateLimitPeriodS);
    const quota = hasTenantLimits(rt.tenantLimits, caller.tenant.name)
      ? await checkTenantLimits(rt.tenantLimits, caller.tenant.name, {
          periodS: rt.options.rateLimitPeriodS,
          countsAgainstQuota: c.req.method === "POST",
          defer: (work) => c.executionCtx.waitUntil(work),
        })
      : "metered";
    await next();
    if (quota === "unmetered") {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(QUOTA_HEADER, "unmetered");
    }
  };
}
