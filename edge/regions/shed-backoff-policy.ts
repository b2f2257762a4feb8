/**
 * How long an isolate keeps a tenant's requests from a region that shed it (429 `tenant_shed`), pure: the pool's
 * Retry-After, at most `MAX_SHED_BACKOFF_MS`. Meanwhile the tenant's rows that would go to that region are
 * answered by the edge at once (degraded, `tenant-shed`) without a call: a flood stops at the edge instead of
 * costing the pool a refusal per request, and a pool that has room again sees the tenant within a second.
 */
export const MAX_SHED_BACKOFF_MS = 1000;

/** The backoff after a shed whose answer carried `retryAfter` (seconds, or absent). */
export function shedBackoffMs(retryAfter: string | null | undefined): number {
  const seconds = retryAfter === null || retryAfter === undefined ? Number.NaN : Number(retryAfter.trim());
  if (!Number.isFinite(seconds) || seconds < 0) return MAX_SHED_BACKOFF_MS;
  return Math.min(MAX_SHED_BACKOFF_MS, seconds * 1000);
}
