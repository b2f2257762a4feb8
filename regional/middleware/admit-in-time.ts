import type { MiddlewareHandler } from "hono";
import type { ServingError } from "../../protocol/errors.ts";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { type AnswerRate, admission, answeringRate, countAnswer, NO_ANSWERS } from "../admission.ts";

export interface AdmitInTimeOptions {
  /** Admitted requests always let in, whatever the estimate: a batch's worth (`--max-batch`). */
  minInFlight: number;
  /** The refusal (the queue-full status, with Retry-After), given the estimated wait and the deadline. */
  refuse: (waitMs: number, deadlineMs: number) => ServingError;
}

/**
 * Admission by deadline (regional/admission.ts): refuse at once a request the pool cannot answer within the
 * deadline it carries; count the admitted ones in flight and the rate at which they are answered. Mounted
 * first on the inference routes, so a refused request's body is never parsed. A malformed deadline header
 * is let through for the deadline layer to answer 400.
 */
export function admitInTime({ minInFlight, refuse }: AdmitInTimeOptions): MiddlewareHandler {
  let inFlight = 0;
  let rate: AnswerRate = NO_ANSWERS;
  return async function admitInTime(c, next) {
    const header = c.req.header(DEADLINE_HEADER);
    const deadlineMs = header === undefined ? Number.POSITIVE_INFINITY : Number(header);
    if (Number.isFinite(deadlineMs)) {
      const decision = admission(inFlight, answeringRate(rate, performance.now()), deadlineMs, minInFlight);
      if (!decision.admit) throw refuse(decision.waitMs, deadlineMs);
    }
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      // Only answered inferences measure the pool's pace; refusals and bad requests cost next to nothing.
      if (c.res.status === 200) rate = countAnswer(rate, performance.now());
    }
  };
}
