import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";
import { runtimeFor } from "../runtime.ts";

/** Attach the isolate's runtime (built and the environment checked on first use) and the arrival time. */
export function isolateRuntime(): MiddlewareHandler<AppEnv> {
  return async function isolateRuntime(c, next) {
    c.set("startedAt", Date.now());
    c.set("runtime", runtimeFor(c.env));
    await next();
  };
}
