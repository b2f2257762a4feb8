import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { AUDIT_HEADER } from "../../protocol/headers.ts";
import type { Recorder } from "../recorder.ts";

/**
 * Counts every response by method, the route pattern that answered (not the raw path) and status; an audit's
 * (an edge answer re-asked, protocol/audit.ts) is no client's request and is not counted.
 */
export function httpMetrics(recorder: Recorder): MiddlewareHandler {
  return async function httpMetrics(c, next) {
    await next();
    if (c.req.header(AUDIT_HEADER) !== undefined) return;
    const route = routePath(c);
    recorder.httpResponse(c.req.method, route === "/*" ? "unmatched" : route, c.res.status);
  };
}
