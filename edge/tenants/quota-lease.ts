import type { LeaseGrant } from "./quota-ledger.ts";

/**
 * One tenant's slice of its global quota in one isolate, and what a request does with it. An isolate asks the
 * tenant's Durable Object (quota-object.ts) for a lease of `slice` requests and serves from it without asking
 * again; it asks for the next one in the background once half is used, so a request never waits for the object.
 * Pure: the state is plain data, time is passed in, and the adapter (tenant-quotas.ts) makes the calls.
 *
 * - Before its first lease of a period an isolate serves **on credit** while it asks, and the next call charges
 *   what it served: the quota can be passed by what one isolate serves during one call to the object.
 * - A lease's unused requests go back with the next call once it is `leaseMs` old, and a lease ends with its
 *   period: an isolate evicted while holding one takes at most `slice` requests with it until the period ends.
 * - Once the object grants nothing (the quota is used up), requests are refused until the period ends; the
 *   isolate asks again at most every `recheckMs` (given-back requests can free some), waiting for that answer.
 * - When a call fails (the object cannot be reached) requests are served **unmetered** for `failOpenMs`, then the
 *   next request tries again; what was served is charged with the next call that gets through.
 */
export interface QuotaLeaseOptions {
  /** Requests asked for per lease. */
  slice: number;
  /** After this long a lease's unused requests go back to the object, ms. */
  leaseMs: number;
  /** While the quota is used up, how often the isolate asks again, ms. */
  recheckMs: number;
  /** After a failed call, how long requests are served unmetered before the next try, ms. */
  failOpenMs: number;
}

export interface LeaseState {
  /** The period of the lease (or of the latest answer), and when it ends (Unix ms; 0: none yet). */
  period: string | undefined;
  endsAt: number;
  /** Requests left in the lease. */
  left: number;
  /** When the lease was granted, Unix ms. */
  takenAt: number;
  /** The object granted nothing in `period`: refuse until this time, then ask again (and wait). */
  exhaustedUntil: number;
  /** A call failed: serve unmetered until this time. */
  failOpenUntil: number;
  /** Unused requests of an expired lease of `period`, to give back with the next call. */
  returnable: number;
  /** Requests served without a lease (on credit, or unmetered) since the last call that got through. */
  owed: number;
}

export const NO_LEASE: LeaseState = {
  period: undefined,
  endsAt: 0,
  left: 0,
  takenAt: 0,
  exhaustedUntil: 0,
  failOpenUntil: 0,
  returnable: 0,
  owed: 0,
};

/**
 * What one request does: `serve` from the lease (`renew`: ask for the next lease in the background), `credit`
 * (no lease yet: serve and ask in the background), `unmetered` (the object cannot be reached: serve, counted),
 * `refuse` (the quota is used up; `retryAfterS` until the period ends), or `ask` (used up, time to ask again:
 * call the object and decide on its answer).
 */
export type QuotaVerdict =
  | { kind: "serve"; renew: boolean }
  | { kind: "credit" }
  | { kind: "unmetered" }
  | { kind: "refuse"; retryAfterS: number }
  | { kind: "ask" };

/** Take one request at `nowMs`. */
export function takeRequest(
  state: LeaseState,
  nowMs: number,
  options: QuotaLeaseOptions,
): { state: LeaseState; verdict: QuotaVerdict } {
  let s = state;
  if (s.endsAt !== 0 && nowMs >= s.endsAt) {
    // The period is over: its lease, refusal and unused requests with it (what is owed is charged to the next).
    s = { ...NO_LEASE, owed: s.owed };
  } else if (s.left > 0 && nowMs - s.takenAt >= options.leaseMs) {
    s = { ...s, returnable: s.returnable + s.left, left: 0 };
  }
  const reachable = nowMs >= s.failOpenUntil;
  if (s.left > 0) {
    const left = s.left - 1;
    const renew = reachable && nowMs >= s.exhaustedUntil && left < options.slice / 2;
    return { state: { ...s, left }, verdict: { kind: "serve", renew } };
  }
  if (!reachable) return { state: { ...s, owed: s.owed + 1 }, verdict: { kind: "unmetered" } };
  if (s.exhaustedUntil !== 0) {
    if (nowMs < s.exhaustedUntil) {
      return { state: s, verdict: { kind: "refuse", retryAfterS: Math.max(1, Math.ceil((s.endsAt - nowMs) / 1000)) } };
    }
    return { state: s, verdict: { kind: "ask" } };
  }
  return { state: { ...s, owed: s.owed + 1 }, verdict: { kind: "credit" } };
}

/** What the next call reports: the unused requests it gives back and those served without a lease. */
export interface LeaseReport {
  returned: { period: string; requests: number } | undefined;
  served: number;
}

/** Start a call: what it reports, and the state without it (restored by `callFailed`). */
export function startCall(state: LeaseState): { state: LeaseState; report: LeaseReport } {
  const returned =
    state.period !== undefined && state.returnable > 0
      ? { period: state.period, requests: state.returnable }
      : undefined;
  return { state: { ...state, returnable: 0, owed: 0 }, report: { returned, served: state.owed } };
}

/** The object's answer at `nowMs`. */
export function callAnswered(
  state: LeaseState,
  grant: LeaseGrant,
  nowMs: number,
  options: QuotaLeaseOptions,
): LeaseState {
  const samePeriod = state.period === grant.period;
  const left = (samePeriod ? state.left : 0) + grant.granted;
  return {
    ...state,
    period: grant.period,
    endsAt: grant.endsAt,
    left,
    takenAt: grant.granted > 0 ? nowMs : state.takenAt,
    exhaustedUntil: grant.granted > 0 ? 0 : Math.min(nowMs + options.recheckMs, grant.endsAt),
    failOpenUntil: 0,
    returnable: samePeriod ? state.returnable : 0,
  };
}

/** A call that failed at `nowMs`: serve unmetered for a while; what it would have reported is reported next time. */
export function callFailed(
  state: LeaseState,
  report: LeaseReport,
  nowMs: number,
  options: QuotaLeaseOptions,
): LeaseState {
  const samePeriod = report.returned !== undefined && report.returned.period === state.period;
  return {
    ...state,
    failOpenUntil: nowMs + options.failOpenMs,
    owed: state.owed + report.served,
    returnable: state.returnable + (samePeriod ? report.returned!.requests : 0),
  };
}
