import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { asServingError } from "../../hono-shared/hono-error.ts";
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from "../../protocol/headers.ts";
import type { RegionalEnv } from "../app-context.ts";
import { ended } from "../tracing/request-end.ts";
import type { RequestTracing } from "../tracing/request-tracing.ts";

/**
 * An inference route's request trace (regional/tracing/), as the fast path makes it: begun from the caller's
 * `traceparent`/`tracestate` once the arrival time is known, ended with the route pattern and the status the app
 * answered. Off, or under a parent marked unsampled, it sets nothing.
 */
export function requestTracing(tracing: RequestTracing): MiddlewareHandler<RegionalEnv> {
  return async function requestTracing(c, next) {
    if (!tracing.enabled) return next();
    const trace = tracing.begin(c.req.header(TRACEPARENT_HEADER), c.req.header(TRACESTATE_HEADER), c.get("receivedUs"));
    if (!trace) return next();
    c.set("trace", trace);
    await next();
    tracing.end(trace, ended(routePath(c), c.res.status, asServingError(c.error)));
  };
}
