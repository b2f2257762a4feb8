import { Hono } from "hono";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import type { AppEnv } from "../app-env.ts";

/**
 * `GET /status/regions`: the latest scheduled probe (shared through the Cache API) and this isolate's own
 * view of each region: breaker state, hedge delay, call counts. Isolates do not share the latter.
 */
export const status = new Hono<AppEnv>();

status.get("/regions", async (c) => {
  const rt = c.var.runtime;
  const probe = await rt.latestProbe(Date.now());
  return c.json({
    servedVersion: rt.servedVersion,
    edgeModel: {
      name: rt.model.config.name,
      version: rt.model.version,
      loaded: rt.model.ready,
      loads: rt.model.loads,
      threshold: rt.threshold,
      calibratedThreshold: rt.model.calibration.threshold,
      ...(rt.model.loadError ? { loadError: (rt.model.loadError as Error).message } : {}),
    },
    probe,
    isolate: rt.book.snapshot(),
  });
});
refuseOtherMethods(status, { "/regions": ["GET"] });
