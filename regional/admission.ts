/**
 * Admission by deadline: refuse at once, before its body is read, a request the pool cannot answer within
 * the deadline its caller sent (`x-edgecascade-deadline-ms`). Under overload a pool's requests otherwise wait
 * where the bounded queue cannot see them (parsed one after another by a saturated event loop), every one gets
 * slower, most expire after the pool has paid to parse them, and the goodput collapses. The wait a new request
 * faces is estimated by Little's law over rows: the rows already admitted and not yet answered, divided by the rate
 * at which the pool has been answering admitted rows (the best 100 ms of the last 10 s, so a quiet spell
 * does not make it pessimistic). Rows, not requests: a pool answering 16-row requests answers far fewer of them
 * than of single rows, and a count of requests learnt on one mix misjudges the other (a request's rows are counted
 * at its tenant's average until its body is read). Up to `minInFlight` rows (a batch's worth: they run in one
 * session.run) are always admitted, and so is any request without a deadline. Pure; measured by
 * `npm run validate:overload`.
 */

/** Rows answered to admitted requests per 100 ms bucket, over the last 10 s. */
export interface AnswerRate {
  /** Start of the current bucket, ms. */
  bucketStart: number;
  /** Answers in the current bucket. */
  current: number;
  /** The best completed bucket in memory, answers per second, and when it ended. */
  best: number;
  bestAt: number;
}

export const BUCKET_MS = 100;
/** How long the best bucket is remembered, ms. */
export const MEMORY_MS = 10_000;

export const NO_ANSWERS: AnswerRate = { bucketStart: 0, current: 0, best: 0, bestAt: 0 };

/** Count one answer of one row at `now` (ms). */
export function countAnswer(rate: AnswerRate, now: number): AnswerRate {
  return countAnswers(rate, now, 1);
}

/** Count one answer of `units` rows at `now` (ms). */
export function countAnswers(rate: AnswerRate, now: number, units: number): AnswerRate {
  if (now - rate.bucketStart < BUCKET_MS) return { ...rate, current: rate.current + units };
  const finished = (rate.current * 1000) / BUCKET_MS;
  const forgotten = now - rate.bestAt > MEMORY_MS;
  const keepBest = !forgotten && rate.best >= finished;
  return {
    bucketStart: now,
    current: units,
    best: keepBest ? rate.best : finished,
    bestAt: keepBest ? rate.bestAt : rate.bucketStart + BUCKET_MS,
  };
}

/** The pool's answering rate to plan with at `now`, answers per second (0: none known). */
export function answeringRate(rate: AnswerRate, now: number): number {
  const current = (rate.current * 1000) / BUCKET_MS;
  return now - rate.bestAt > MEMORY_MS ? current : Math.max(rate.best, current);
}

export interface AdmissionDecision {
  admit: boolean;
  /** The wait a new request is expected to face, ms. */
  waitMs: number;
}

/**
 * Admit a request with `deadlineMs` left (Infinity without a deadline) while `inFlight` admitted rows are
 * unanswered and the pool answers `rateRps` rows per second?
 */
export function admission(
  inFlight: number,
  rateRps: number,
  deadlineMs: number,
  minInFlight: number,
): AdmissionDecision {
  const waitMs = rateRps > 0 ? (inFlight / rateRps) * 1000 : 0;
  return { admit: inFlight < minInFlight || waitMs < deadlineMs, waitMs };
}

/**
 * What a best-effort request's admission reads besides the pool's load, when the pool has tenants
 * (regional/tenants/). Best-effort covers best-effort tenants, `direct` and `other` callers, and a guaranteed
 * tenant's requests beyond its reservation.
 */
export interface BestEffortShare {
  /** Share of its deadline a best-effort request may expect to wait (`--best-effort-wait-percent` / 100). */
  waitShare: number;
  /** Best-effort rows of this request's tenant admitted and not yet answered. */
  flowInFlight: number;
  /**
   * This tenant's weight over the weights of every tenant with best-effort requests in flight, itself included
   * (1 when it is alone).
   */
  flowShare: number;
  /** Rows admitted within a reservation and not yet answered. */
  reservedInFlight: number;
}

export interface BestEffortDecision extends AdmissionDecision {
  /**
   * Refused because it is best-effort: a request within a reservation would have been admitted now (429
   * `tenant_shed`). False when the pool could not answer even that in time (`overloaded`).
   */
  shed: boolean;
}

/**
 * Admit a request within a reservation? Calls within reservations run before every best-effort call
 * (tenants/fair-order.ts), so what is ahead of one is the reserved rows in flight, not the best-effort work queued
 * behind them: `admission` over those. A pool is `overloaded` for reservations only when they alone are more than
 * it answers in time (reservations sold past its capacity, docs/capacity.md).
 */
export function reservedAdmission(
  reservedInFlight: number,
  rateRps: number,
  deadlineMs: number,
  minInFlight: number,
): AdmissionDecision {
  return admission(reservedInFlight, rateRps, deadlineMs, minInFlight);
}

/**
 * Admission of a best-effort request on a pool with tenants. Requests within a reservation are admitted while the
 * work ahead takes less than their deadline (`admission`); best-effort ones only while it takes less than
 * `waitShare` of theirs, so under overload best-effort work is refused first and the rest of every deadline is
 * kept for reservations. The room that share leaves (the rows the pool answers in it) is shared by weight: a
 * tenant with fewer best-effort rows in flight than its weighted share of that room is admitted even when
 * another tenant's flood has filled it, so one best-effort tenant never locks out the others. The flood's
 * rows plus every other tenant's share stay within twice the room, i.e. within the deadline at the default
 * share of one half. The batch's worth always admitted (`minInFlight`) is not a best-effort request's while a
 * reserved one is in flight: that much of a flood could be ahead of it.
 */
export function bestEffortAdmission(
  inFlight: number,
  rateRps: number,
  deadlineMs: number,
  minInFlight: number,
  share: BestEffortShare,
): BestEffortDecision {
  const waitMs = rateRps > 0 ? (inFlight / rateRps) * 1000 : 0;
  const allowedMs = deadlineMs * share.waitShare;
  const exempt = inFlight < minInFlight && share.reservedInFlight === 0;
  if (exempt || waitMs < allowedMs) return { admit: true, waitMs, shed: false };
  const room = (rateRps * allowedMs) / 1000;
  if (share.flowInFlight < room * share.flowShare) return { admit: true, waitMs, shed: false };
  return {
    admit: false,
    waitMs,
    shed: reservedAdmission(share.reservedInFlight, rateRps, deadlineMs, minInFlight).admit,
  };
}
