import type { MiddlewareHandler } from "hono";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { nowUs } from "../clock.ts";
import { deadlineFromHeader } from "../deadline-header.ts";

/** Per-request clock: when the pool received the request and when its caller stops waiting (microseconds). */
export type DeadlineVariables = { receivedUs: number; deadlineUs: number };

/** Notes the arrival time and the deadline header's absolute deadline before the body is read (400 if malformed). */
export function requestDeadline(): MiddlewareHandler<{ Variables: DeadlineVariables }> {
  return async function deadline(c, next) {
    const receivedUs = nowUs();
    c.set("receivedUs", receivedUs);
    c.set("deadlineUs", deadlineFromHeader(c.req.header(DEADLINE_HEADER), receivedUs));
    await next();
  };
}
