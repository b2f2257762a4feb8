import { type QuotaPer, quotaPeriod } from "./quota-period.ts";

/**
 * A tenant's global quota as its Durable Object keeps it (tenants/quota-object.ts): the requests of the current
 * period granted to isolates in leases (counted as used when granted, so the tenant is never served more than its
 * quota through leases), less what isolates gave back unused, plus what they served while they could not reach
 * the object. Pure: the object stores the ledger and passes its own clock.
 */
export interface QuotaLedger {
  /** The period the count is for (quota-period.ts); a new period starts from 0. */
  period: string;
  used: number;
}

/** An isolate's call for a lease. */
export interface LeaseRequest {
  per: QuotaPer;
  /** The tenant's quota per period (the isolate's configuration; the latest deployed applies). */
  limit: number;
  /** Requests the isolate asks for. */
  slice: number;
  /** Unused requests of an earlier lease, given back; credited only when of the current period. */
  returned?: { period: string; requests: number };
  /**
   * Requests the isolate served without a lease (before its first lease arrived, or while the object could not
   * be reached); charged to the current period before anything is granted.
   */
  served?: number;
}

/** The lease granted (possibly 0 requests: the quota is used up until `endsAt`). */
export interface LeaseGrant {
  period: string;
  /** When the period ends, Unix ms: a lease never outlives it. */
  endsAt: number;
  granted: number;
  /** Requests of the period used after this grant (leases included), and the quota. */
  used: number;
  limit: number;
}

/** Grant a lease at `nowMs`: the ledger after, and the grant. */
export function grantLease(
  ledger: QuotaLedger | undefined,
  request: LeaseRequest,
  nowMs: number,
): { ledger: QuotaLedger; grant: LeaseGrant } {
  const period = quotaPeriod(request.per, nowMs);
  let used = ledger?.period === period.id ? ledger.used : 0;
  if (request.returned?.period === period.id) used = Math.max(0, used - Math.max(0, request.returned.requests));
  used += Math.max(0, request.served ?? 0);
  const granted = Math.max(0, Math.min(Math.max(0, Math.floor(request.slice)), request.limit - used));
  used += granted;
  return {
    ledger: { period: period.id, used },
    grant: { period: period.id, endsAt: period.endsAt, granted, used, limit: request.limit },
  };
}
