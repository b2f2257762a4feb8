import type { MiddlewareHandler } from "hono";
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from "../../protocol/headers.ts";
import type { AppEnv } from "../app-env.ts";
import { traceTimingEntry } from "../observe/trace-context.ts";
import { runtimeFor } from "../runtime.ts";

/**
 * Attach the isolate's runtime (built and the environment checked on first use), the arrival time and the
 * request's trace, and name that trace in the answer's Server-Timing (`traceparent;desc="..."`), whatever
 * the answer (errors included).
 */
export function isolateRuntime(): MiddlewareHandler<AppEnv> {
  return async function isolateRuntime(c, next) {
    c.set("startedAt", Date.now());
    const runtime = runtimeFor(c.env);
    c.set("runtime", runtime);
    let ctx: ExecutionContext | undefined;
    try {
      ctx = c.executionCtx as ExecutionContext;
    } catch {
      // No execution context (outside a Worker).
    }
    const trace = runtime.trace(c.req.header(TRACEPARENT_HEADER), c.req.header(TRACESTATE_HEADER), ctx);
    c.set("trace", trace);
    await next();
    c.header("server-timing", traceTimingEntry(trace), { append: true });
  };
}
