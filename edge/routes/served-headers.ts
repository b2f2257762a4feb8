import type { Context } from "hono";
import { setMetric } from "hono/timing";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../../protocol/headers.ts";
import type { AppEnv } from "../app-env.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { Served } from "../serve.ts";

/**
 * Headers of an answer: who served it, the model version, why it is degraded, Server-Timing entries
 * (`cache`, `edge`, `regional;desc="<region>"`, `hedge`); count it for the model and the tenant; and hand the
 * shared-cache write to waitUntil.
 */
export function applyServed(c: Context<AppEnv>, model: ServedModel, served: Served): void {
  c.header(SERVED_BY_HEADER, served.servedBy);
  c.header(MODEL_VERSION_HEADER, served.version);
  if (served.degraded) c.header(DEGRADED_HEADER, served.degraded);
  const { cache, edge, regional } = served.trace;
  if (cache.tier === "bypass") setMetric(c, "cache", "bypass");
  else setMetric(c, "cache", cache.ms, cache.tier === "miss" ? "miss" : `hit-${cache.tier}`);
  if (edge && model.edge) setMetric(c, "edge", `${model.edge.config.name} v${model.edge.version}`);
  if (regional) {
    setMetric(c, "regional", regional.ms, regional.region);
    if (regional.hedged) setMetric(c, "hedge");
  }
  c.get("runtime").counts.answered(model.name, c.get("tenant").name, served.servedBy);
  if (served.pending) {
    const write = served.pending.catch((err: unknown) => console.warn(`cache write failed: ${(err as Error).message}`));
    try {
      c.executionCtx.waitUntil(write);
    } catch {
      // No execution context (outside a Worker): the write finishes on its own.
    }
  }
}
