import type { MiddlewareHandler } from "hono";
import type { ServingError } from "../../protocol/errors.ts";
import { type AnswerRate, admission, answeringRate, countAnswer, NO_ANSWERS } from "../admission.ts";
import type { DeadlineVariables } from "./request-deadline.ts";

export interface AdmitInTimeOptions {
  /** Admitted requests always let in, whatever the estimate: a batch's worth (`--max-batch`). */
  minInFlight: number;
  /** The refusal (the queue-full status, with Retry-After), given the estimated wait and the deadline. */
  refuse: (waitMs: number, deadlineMs: number) => ServingError;
}

/** Admission by deadline for the pool's inference requests, whichever HTTP layer reads them. */
export interface InferenceAdmission {
  /**
   * Admit a request with this many milliseconds left (its deadline header, already read: a malformed one was a
   * 400 before admission; undefined without one), or throw the refusal; the returned function is called once
   * with the answer's status.
   */
  admit(deadlineMs: number | undefined): (status: number) => void;
}

/**
 * Admission by deadline (regional/admission.ts): refuse at once a request the pool cannot answer within the
 * deadline it carries; count the admitted ones in flight and the rate at which they are answered. One for the
 * pool: the Hono routes (`admitInTime`) and the node:http fast path share it, as they share the pool's time.
 */
export function inferenceAdmission({ minInFlight, refuse }: AdmitInTimeOptions): InferenceAdmission {
  let inFlight = 0;
  let rate: AnswerRate = NO_ANSWERS;
  // One function for every admitted request (it holds no state of its own), not a closure made per request.
  const answered = (status: number) => {
    inFlight--;
    // Only answered inferences measure the pool's pace; refusals and bad requests cost next to nothing.
    if (status === 200) rate = countAnswer(rate, performance.now());
  };
  return {
    admit(deadlineMs) {
      if (deadlineMs !== undefined) {
        const decision = admission(inFlight, answeringRate(rate, performance.now()), deadlineMs, minInFlight);
        if (!decision.admit) throw refuse(decision.waitMs, deadlineMs);
      }
      inFlight++;
      return answered;
    },
  };
}

/**
 * The admission as Hono middleware, mounted on the inference routes right after the deadline clock
 * (request-deadline.ts, which read the header) so a refused body is never parsed.
 */
export function admitInTime(shared: InferenceAdmission): MiddlewareHandler<{ Variables: DeadlineVariables }> {
  return async function admitInTime(c, next) {
    const answered = shared.admit(c.get("deadlineMs"));
    try {
      await next();
    } finally {
      answered(c.res.status);
    }
  };
}
