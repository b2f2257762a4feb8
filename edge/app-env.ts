import type { Env } from "./env.ts";
import type { Tenant } from "./middleware/api-key.ts";
import type { EdgeTrace } from "./observe/trace-context.ts";
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
    /** Whose request it is: the API key's tenant and scope (`anonymous` without keys). */
    tenant: Tenant;
    /** The model the request named, once it is known (for the per-model counts of refusals). */
    model: string;
    /** The request's trace (edge/observe/trace-context.ts), named in every answer's Server-Timing. */
    trace: EdgeTrace;
  };
}
