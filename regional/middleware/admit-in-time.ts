import type { MiddlewareHandler } from "hono";
import type { ServingError } from "../../protocol/errors.ts";
import { TENANT_HEADER } from "../../protocol/headers.ts";
import {
  type AnswerRate,
  admission,
  answeringRate,
  bestEffortAdmission,
  countAnswers,
  NO_ANSWERS,
  reservedAdmission,
} from "../admission.ts";
import type { RegionalEnv } from "../app-context.ts";
import { nowUs } from "../clock.ts";
import type { TenantScheduler } from "../tenants/tenant-scheduler.ts";
import { DIRECT_FLOW } from "../tenants/tenant-table.ts";

export interface AdmitInTimeOptions {
  /** Admitted requests always let in, whatever the estimate: a batch's worth (`--max-batch`). */
  minInFlight: number;
  /** The refusal (the queue-full status, with Retry-After), given the estimated wait and the deadline. */
  refuse: (waitMs: number, deadlineMs: number) => ServingError;
  /** The pool's tenants: which flow a call is, reservations, per-tenant counts. */
  tenants: TenantScheduler;
  /**
   * A best-effort request refused while a request within a reservation would be admitted (429 `tenant_shed`, with
   * Retry-After), given the estimated wait, the deadline and the tenant's name.
   */
  shed: (waitMs: number, deadlineMs: number, tenant: string) => ServingError;
  /**
   * Share of its deadline a best-effort request may expect to wait when the configuration declares tenants
   * (`--best-effort-wait-percent`): the rest is kept for reservations. Default 0.5.
   */
  bestEffortWaitShare?: number;
}

/** An admitted request: its tenant's flow, and what the answering code tells admission about it. */
export interface Admitted {
  readonly flow: number;
  /** Admitted within its tenant's reservation. */
  readonly reserved: boolean;
  /** Its rows, once its body is read (until then it counts as its tenant's average). */
  rowsKnown(rows: number): void;
  /** It was answered, with this status; called once. */
  answered(status: number): void;
}

/** Admission by deadline for the pool's inference requests, whichever HTTP layer reads them. */
export interface InferenceAdmission {
  /**
   * Admit a request with this many milliseconds left (its deadline header, already read: a malformed one was a
   * 400 before admission; undefined without one) and this tenant header, or throw the refusal (a malformed
   * tenant: 400); the returned `answered` is called once with the answer's status.
   */
  admit(deadlineMs: number | undefined, tenantHeader?: string): Admitted;
}

/** How quickly a tenant's average rows per request follows its requests (exponential moving average). */
const ROWS_SMOOTHING = 0.1;

/**
 * Admission by deadline (regional/admission.ts): refuse at once a request the pool cannot answer within the
 * deadline it carries; count the rows admitted and in flight and the rate at which rows are answered. One for the
 * pool: the Hono routes (`admitInTime`), the node:http fast path and gRPC share it, as they share the pool's time.
 *
 * With tenants declared (`--tenants`), a request of a guaranteed tenant with reservation left is admitted while the
 * reserved rows ahead of it fit its deadline (`reservedAdmission`: they run first); every other request is
 * best-effort (`bestEffortAdmission`): refused first, and fairly among tenants. Without, every request is admitted
 * alike, as before tenants existed.
 */
export function inferenceAdmission(options: AdmitInTimeOptions): InferenceAdmission {
  const { minInFlight, refuse, tenants, shed } = options;
  const waitShare = options.bestEffortWaitShare ?? 0.5;
  const { flows } = tenants.table;
  const byClass = flows.length > 2 || tenants.table.hasReservations;
  /** Rows admitted and unanswered: all, within reservations, and best-effort per flow. */
  let inFlight = 0;
  let reservedInFlight = 0;
  const bestEffortRows = flows.map(() => 0);
  /** Best-effort requests in flight per flow, and the weights of the flows that have any. */
  const bestEffortRequests = flows.map(() => 0);
  let activeWeight = 0;
  /** Each flow's rows per request, on average. */
  const averageRows = flows.map(() => 1);
  let rate: AnswerRate = NO_ANSWERS;

  /** One per admitted request: the rows it is counted as, until answered. */
  class Ticket implements Admitted {
    readonly flow: number;
    readonly reserved: boolean;
    rows: number;

    constructor(flow: number, reserved: boolean) {
      this.flow = flow;
      this.reserved = reserved;
      this.rows = averageRows[flow]!;
      this.#add(this.rows);
    }

    #add(rows: number): void {
      inFlight += rows;
      if (this.reserved) reservedInFlight += rows;
      else bestEffortRows[this.flow]! += rows;
    }

    rowsKnown(rows: number): void {
      this.#add(rows - this.rows);
      this.rows = rows;
      averageRows[this.flow]! += (rows - averageRows[this.flow]!) * ROWS_SMOOTHING;
    }

    answered(status: number): void {
      this.#add(-this.rows);
      if (!this.reserved && byClass && --bestEffortRequests[this.flow]! === 0) activeWeight -= flows[this.flow]!.weight;
      // Only answered inferences measure the pool's pace; refusals and bad requests cost next to nothing.
      if (status === 200) rate = countAnswers(rate, performance.now(), this.rows);
    }
  }

  return {
    admit(deadlineMs, tenantHeader) {
      const flow = tenantHeader === undefined ? DIRECT_FLOW : tenants.flowOf(tenantHeader);
      const reserved = byClass && tenants.withinReservation(flow, nowUs());
      if (deadlineMs !== undefined) {
        const rateRps = answeringRate(rate, performance.now());
        if (reserved || !byClass) {
          const decision = reserved
            ? reservedAdmission(reservedInFlight, rateRps, deadlineMs, minInFlight)
            : admission(inFlight, rateRps, deadlineMs, minInFlight);
          if (!decision.admit) {
            tenants.recorder(flow).request("overloaded");
            throw refuse(decision.waitMs, deadlineMs);
          }
        } else {
          const weight = flows[flow]!.weight;
          const flowShare = weight / (activeWeight + (bestEffortRequests[flow] === 0 ? weight : 0));
          const decision = bestEffortAdmission(inFlight, rateRps, deadlineMs, minInFlight, {
            waitShare,
            flowInFlight: bestEffortRows[flow]!,
            flowShare,
            reservedInFlight,
          });
          if (!decision.admit) {
            tenants.recorder(flow).request(decision.shed ? "shed" : "overloaded");
            throw decision.shed
              ? shed(decision.waitMs, deadlineMs, flows[flow]!.name)
              : refuse(decision.waitMs, deadlineMs);
          }
        }
      }
      if (!reserved && byClass && bestEffortRequests[flow]!++ === 0) activeWeight += flows[flow]!.weight;
      return new Ticket(flow, reserved);
    },
  };
}

/**
 * The admission as Hono middleware, mounted on the inference routes right after the deadline clock
 * (request-deadline.ts, which read the header) so a refused body is never parsed; the admitted request (its
 * tenant flow, where its rows are told) goes on to the route (`admitted`).
 */
export function admitInTime(shared: InferenceAdmission): MiddlewareHandler<RegionalEnv> {
  return async function admitInTime(c, next) {
    const admitted = shared.admit(c.get("deadlineMs"), c.req.header(TENANT_HEADER));
    c.set("admitted", admitted);
    try {
      await next();
    } finally {
      admitted.answered(c.res.status);
    }
  };
}
