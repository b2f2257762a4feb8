import type { MiddlewareHandler } from "hono";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { nowUs } from "../clock.ts";
import { deadlineAt, deadlineMs } from "../deadline-header.ts";

/**
 * Per-request clock: when the pool received the request, the deadline header's milliseconds (undefined without
 * one) and when its caller stops waiting (microseconds).
 */
export type DeadlineVariables = { receivedUs: number; deadlineMs: number | undefined; deadlineUs: number };

/**
 * Notes the arrival time and the deadline header's absolute deadline before anything else (400 for a malformed
 * header, whatever the load: admission comes after, and reads the milliseconds noted here).
 */
export function requestDeadline(): MiddlewareHandler<{ Variables: DeadlineVariables }> {
  return async function deadline(c, next) {
    const receivedUs = nowUs();
    const ms = deadlineMs(c.req.header(DEADLINE_HEADER));
    c.set("receivedUs", receivedUs);
    c.set("deadlineMs", ms);
    c.set("deadlineUs", deadlineAt(ms, receivedUs));
    await next();
  };
}
