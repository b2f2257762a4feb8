/**
 * Admission by deadline: refuse at once, before its body is read, a request the pool cannot answer within
 * the deadline its caller sent (`x-edgecascade-deadline-ms`). Under overload a pool's requests otherwise wait
 * where the bounded queue cannot see them (parsed one after another by a saturated event loop), every one gets
 * slower, most expire after the pool has paid to parse them, and the goodput collapses. The wait a new request
 * faces is estimated by Little's law: the requests already admitted and not yet answered, divided by the rate
 * at which the pool has been answering admitted requests (the best 100 ms of the last 10 s, so a quiet spell
 * does not make it pessimistic). Up to `minInFlight` requests (a batch's worth: they run in one session.run)
 * are always admitted, and so is any request without a deadline. Pure; measured by `npm run validate:overload`.
 */

/** Answers of admitted requests per 100 ms bucket, over the last 10 s. */
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

/** Count one answer at `now` (ms). */
export function countAnswer(rate: AnswerRate, now: number): AnswerRate {
  if (now - rate.bucketStart < BUCKET_MS) return { ...rate, current: rate.current + 1 };
  const finished = (rate.current * 1000) / BUCKET_MS;
  const forgotten = now - rate.bestAt > MEMORY_MS;
  const keepBest = !forgotten && rate.best >= finished;
  return {
    bucketStart: now,
    current: 1,
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
 * Admit a request with `deadlineMs` left (Infinity without a deadline) while `inFlight` admitted requests are
 * unanswered and the pool answers `rateRps` per second?
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
