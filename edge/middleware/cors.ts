import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";

export interface CorsOptions {
  /** `Access-Control-Allow-Methods` of preflights. */
  allowMethods: readonly string[];
  /** `Access-Control-Allow-Headers` of preflights. */
  allowHeaders: readonly string[];
  /** `Access-Control-Expose-Headers`: the answer headers browser code may read. */
  exposeHeaders: readonly string[];
  /** `Access-Control-Max-Age` of preflights, in seconds. */
  maxAgeS: number;
}

/** The `Access-Control-Allow-Origin` for a request's Origin: `*`, the origin itself when allowed, else none. */
export function allowedOrigin(origin: string, allowed: readonly string[] | "*"): string | undefined {
  if (allowed === "*") return "*";
  return allowed.includes(origin) ? origin : undefined;
}

/**
 * CORS with the allowed origins of the isolate's options (`CORS_ORIGINS`): a preflight (any OPTIONS) is
 * answered here with 204; every other answer, errors included, gets Allow-Origin and Expose-Headers after the
 * route has run. The headers are hono/cors's for the same options (with a function for the origin, so
 * `Vary: Origin` always). Why not hono/cors: it sets its headers on `c.res` before the route runs, which makes
 * Hono build a placeholder Response per request and copy its headers into the route's own; in workerd that
 * was about a tenth of a cache hit's CPU (docs/performance.md).
 */
export function cors(options: CorsOptions): MiddlewareHandler<AppEnv> {
  const methods = options.allowMethods.join(",");
  const headers = options.allowHeaders.join(",");
  const exposed = options.exposeHeaders.join(",");
  const maxAge = String(options.maxAgeS);
  return async function cors(c, next) {
    const origin = allowedOrigin(c.req.header("origin") ?? "", c.get("runtime").options.corsOrigins);
    if (c.req.method === "OPTIONS") {
      const preflight = new Headers({
        "access-control-expose-headers": exposed,
        vary: "Origin, Access-Control-Request-Headers",
        "access-control-max-age": maxAge,
        "access-control-allow-methods": methods,
        "access-control-allow-headers": headers,
      });
      if (origin) preflight.set("access-control-allow-origin", origin);
      return new Response(null, { status: 204, headers: preflight });
    }
    await next();
    const answer = c.res.headers;
    if (origin) answer.set("access-control-allow-origin", origin);
    answer.set("access-control-expose-headers", exposed);
    answer.append("vary", "Origin");
  };
}
