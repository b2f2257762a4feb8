import type { Context } from "hono";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../../protocol/headers.ts";
import type { AppEnv } from "../app-env.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { Served } from "../serve.ts";
import { serverTimingValue } from "./server-timing.ts";

/**
 * Headers of an answer: who served it, the model version, why it is degraded, Server-Timing (`cache`, `edge`,
 * `regional;desc="<region>"`, `hedge`) with Timing-Allow-Origin, so that browser code can read it through the
 * Resource Timing API; count it for the model and the tenant; and hand the shared-cache write to waitUntil.
 */
export function applyServed(c: Context<AppEnv>, model: ServedModel, served: Served): void {
  const runtime = c.get("runtime");
  const { corsOrigins } = runtime.options;
  c.header(SERVED_BY_HEADER, served.servedBy);
  c.header(MODEL_VERSION_HEADER, served.version);
  if (served.degraded) c.header(DEGRADED_HEADER, served.degraded);
  const edgeModel = model.edge && `${model.edge.config.name} v${model.edge.version}`;
  c.header("server-timing", serverTimingValue(served.trace, edgeModel));
  c.header("timing-allow-origin", corsOrigins === "*" ? "*" : corsOrigins.join(", "));
  runtime.counts.answered(model.name, c.get("tenant").name, served.servedBy);
  if (served.pending) {
    const write = served.pending.catch((err: unknown) => console.warn(`cache write failed: ${(err as Error).message}`));
    try {
      c.executionCtx.waitUntil(write);
    } catch {
      // No execution context (outside a Worker): the write finishes on its own.
    }
  }
}
