import type { Env } from "./env.ts";
import type { EdgeRuntime } from "./runtime.ts";

/** Hono's typing of the Worker's app: bindings and per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    runtime: EdgeRuntime;
    /** Unix ms when the request arrived. */
    startedAt: number;
    /** Who the request counts against for rate limiting: `key:<digest>` or `ip:<address>`. */
    client: string;
  };
}
