import { RegionError, tenantShed } from "./errors.ts";
import type { RegionBook } from "./region-book.ts";
import type { Interceptor } from "./types.ts";

/**
 * A region that shed a tenant (429 `tenant_shed`) gets none of that tenant's calls from this isolate until its
 * Retry-After is over (at most a second, regions/shed-backoff-policy.ts): the call fails at once as `tenant_shed`,
 * nothing is sent, and the request is answered degraded. A flood so stops at the edge rather than costing the
 * pool a refusal per request. Calls without a tenant (warm probes) pass.
 */
export const tenantBackoff =
  (book: RegionBook): Interceptor =>
  (next) =>
  async (call) => {
    const { tenant } = call;
    const name = call.region.name;
    if (tenant !== undefined && book.keepsShed(name, tenant, Date.now())) {
      throw tenantShed(name, "not sent: the region shed this tenant within its Retry-After");
    }
    try {
      return await next(call);
    } catch (err) {
      if (tenant !== undefined && err instanceof RegionError && err.code === "tenant_shed" && err.backoffMs) {
        book.shedTenant(name, tenant, Date.now() + err.backoffMs);
      }
      throw err;
    }
  };
