import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { setMetric } from "hono/timing";
import { NotFound, PayloadTooLarge } from "../../protocol/errors.ts";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../../protocol/headers.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import type { AppEnv } from "../app-env.ts";
import { requestLocation } from "../regions/location.ts";
import type { RequestLocation } from "../regions/region.ts";
import type { EdgeRuntime } from "../runtime.ts";
import type { Served } from "../serve.ts";

/** Body size limit of the POST routes: 413 through the one onError. */
export const limitBody = bodyLimit({
  maxSize: DEFAULT_LIMITS.maxBodyBytes,
  onError: () => {
    throw new PayloadTooLarge(`request body exceeds ${DEFAULT_LIMITS.maxBodyBytes} bytes`);
  },
});

/** The JSON body: 415 for another content type, 400 for bad JSON. */
export async function readJson(c: Context<AppEnv>): Promise<unknown> {
  return parseJsonBody(await c.req.text(), c.req.header("content-type"));
}

/** Clients name the logical model (`digits`) and at most the version the edge serves; else 404. */
export function checkModel(rt: EdgeRuntime, model: string, version: string | undefined): void {
  if (model !== rt.modelName) throw new NotFound(`unknown model "${model}"; this endpoint serves "${rt.modelName}"`);
  if (version !== undefined && version !== rt.servedVersion) {
    throw new NotFound(
      `model "${model}" has no version "${version}" here; the served version is "${rt.servedVersion}"`,
    );
  }
}

/** Where the request comes from: `request.cf`, or the local override header where allowed. */
export function locate(c: Context<AppEnv>): RequestLocation {
  const cf = c.req.raw.cf as Parameters<typeof requestLocation>[0];
  return requestLocation(cf, c.req.header("x-edgecascade-location"), c.var.runtime.options.allowLocationOverride);
}

/**
 * Headers of an answer: who served it, the model version, why it is degraded, Server-Timing entries
 * (`cache`, `edge`, `regional;desc="<region>"`, `hedge`); and hand the shared-cache write to waitUntil.
 */
export function applyServed(c: Context<AppEnv>, served: Served): void {
  c.header(SERVED_BY_HEADER, served.servedBy);
  c.header(MODEL_VERSION_HEADER, served.version);
  if (served.degraded) c.header(DEGRADED_HEADER, served.degraded);
  const { cache, edge, regional } = served.trace;
  if (cache.tier === "bypass") setMetric(c, "cache", "bypass");
  else setMetric(c, "cache", cache.ms, cache.tier === "miss" ? "miss" : `hit-${cache.tier}`);
  if (edge) setMetric(c, "edge", `${c.var.runtime.model.config.name} v${c.var.runtime.model.version}`);
  if (regional) {
    setMetric(c, "regional", regional.ms, regional.region);
    if (regional.hedged) setMetric(c, "hedge");
  }
  if (served.pending) {
    const write = served.pending.catch((err: unknown) => console.warn(`cache write failed: ${(err as Error).message}`));
    try {
      c.executionCtx.waitUntil(write);
    } catch {
      // No execution context (outside a Worker): the write finishes on its own.
    }
  }
}
