import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Recorder } from "../recorder.ts";

/** Counts every response by method, the route pattern that answered (not the raw path) and status. */
export function httpMetrics(recorder: Recorder): MiddlewareHandler {
  return async function httpMetrics(c, next) {
    await next();
    const route = routePath(c);
    recorder.httpResponse(c.req.method, route === "/*" ? "unmatched" : route, c.res.status);
  };
}
