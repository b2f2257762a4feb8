import { Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import { tritonModelConfig } from "../../protocol/triton-config.ts";
import type { AppDeps, RegionalEnv } from "../app-context.ts";

/**
 * Triton's model configuration and statistics extensions, which perf_analyzer and model_analyzer read:
 * `/v2/models/{m}[/versions/{v}]/config` (the serving version's config.json in Triton's form, with this pool's
 * batching) and `/v2/models[/{m}[/versions/{v}]]/stats` (this pool's counts and durations; in a cluster, every
 * worker's summed). Mounted before the metadata routes: `/v2/models/stats` is this, not a model named "stats",
 * as on Triton.
 */
export function tritonExtensionRoutes(deps: AppDeps): Hono<RegionalEnv> {
  const { repository } = deps;
  const app = new Hono<RegionalEnv>();

  const config = (name: string, version: string | undefined) => {
    const lease = repository.acquire(name, version);
    try {
      const { config, io } = lease.model;
      return tritonModelConfig(config, {
        maxBatchSize: Math.min(deps.limits.maxBatch, io.maxBatchSize),
        maxQueueDelayUs: deps.maxQueueDelayUs,
        kind: deps.provider === "cuda" ? "KIND_GPU" : "KIND_CPU",
        version: lease.model.version,
      });
    } finally {
      lease.release();
    }
  };
  app.get("/v2/models/:model/config", (c) => c.json(config(c.req.param("model"), undefined)));
  app.get("/v2/models/:model/versions/:version/config", (c) =>
    c.json(config(c.req.param("model"), c.req.param("version"))),
  );

  const stats = async (name?: string, version?: string) => {
    // 404 naming the served models for one this pool does not serve, as the other model routes answer.
    if (name !== undefined) repository.metadata(name, version);
    const all = await deps.statistics();
    return {
      model_stats: all.filter(
        (s) => (name === undefined || s.name === name) && (version === undefined || s.version === version),
      ),
    };
  };
  app.get("/v2/models/stats", async (c) => c.json(await stats()));
  app.get("/v2/models/:model/stats", async (c) => c.json(await stats(c.req.param("model"))));
  app.get("/v2/models/:model/versions/:version/stats", async (c) =>
    c.json(await stats(c.req.param("model"), c.req.param("version"))),
  );

  return refuseOtherMethods(app, {
    "/v2/models/stats": ["GET"],
    "/v2/models/:model/config": ["GET"],
    "/v2/models/:model/versions/:version/config": ["GET"],
    "/v2/models/:model/stats": ["GET"],
    "/v2/models/:model/versions/:version/stats": ["GET"],
  });
}
