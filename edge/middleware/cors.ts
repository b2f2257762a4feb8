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
 * The headers CORS adds to an answer that is not a preflight, for the request's Origin (`""` without one) and
 * the allowed origins: `Vary: Origin` always; for a request with an Origin, Allow-Origin (when allowed),
 * Expose-Headers and `Timing-Allow-Origin` (the allowed origins, so that browser code can read Server-Timing
 * through the Resource Timing API). A request without an Origin is not a browser's cross-origin request, so
 * the rest would be read by no one; each header is CPU on every answer in workerd (docs/performance.md).
 * What `cors` sets after the route, and what the classify fast path (edge/fast-path/) writes into its answers.
 */
export function corsAnswerHeaders(
  options: CorsOptions,
): (origin: string, allowed: readonly string[] | "*") => Record<string, string> {
  const exposed = options.exposeHeaders.join(",");
  return (origin, allowed) => {
    if (origin === "") return { vary: "Origin" };
    const headers: Record<string, string> = {
      "access-control-expose-headers": exposed,
      "timing-allow-origin": allowed === "*" ? "*" : allowed.join(", "),
      vary: "Origin",
    };
    const allowOrigin = allowedOrigin(origin, allowed);
    if (allowOrigin !== undefined) headers["access-control-allow-origin"] = allowOrigin;
    return headers;
  };
}

/**
 * CORS with the allowed origins of the isolate's options (`CORS_ORIGINS`): a preflight (any OPTIONS) is
 * answered here with 204; every other answer, errors included, gets `corsAnswerHeaders` after the route has
 * run. The headers are hono/cors's for the same options (with a function for the origin, so `Vary: Origin`
 * always), less those no browser asked for. Why not hono/cors: it sets its headers on `c.res` before the
 * route runs, which makes Hono build a placeholder Response per request and copy its headers into the
 * route's own; in workerd that was about a tenth of a cache hit's CPU (docs/performance.md).
 */
export function cors(options: CorsOptions): MiddlewareHandler<AppEnv> {
  const methods = options.allowMethods.join(",");
  const headers = options.allowHeaders.join(",");
  const exposed = options.exposeHeaders.join(",");
  const maxAge = String(options.maxAgeS);
  const answerHeaders = corsAnswerHeaders(options);
  return async function cors(c, next) {
    const origin = c.req.header("origin") ?? "";
    const allowed = c.get("runtime").options.corsOrigins;
    if (c.req.method === "OPTIONS") {
      const preflight = new Headers({
        "access-control-expose-headers": exposed,
        vary: "Origin, Access-Control-Request-Headers",
        "access-control-max-age": maxAge,
        "access-control-allow-methods": methods,
        "access-control-allow-headers": headers,
      });
      const allowOrigin = allowedOrigin(origin, allowed);
      if (allowOrigin) preflight.set("access-control-allow-origin", allowOrigin);
      return new Response(null, { status: 204, headers: preflight });
    }
    await next();
    const answer = c.res.headers;
    for (const [name, value] of Object.entries(answerHeaders(origin, allowed))) {
      if (name === "vary") answer.append(name, value);
      else answer.set(name, value);
    }
  };
}
