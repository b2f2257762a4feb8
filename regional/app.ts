import { Hono } from "hono";
import { asServingError } from "../hono-shared/hono-error.ts";
import { errorResponse } from "../protocol/error-answer.ts";
import { NotFound } from "../protocol/errors.ts";
import type { AppDeps, RegionalEnv } from "./app-context.ts";
import type { InferenceAnswers } from "./inference-answers.ts";
import { closeConnectionsWhile } from "./middleware/drain.ts";
import { httpMetrics } from "./middleware/http-metrics.ts";
import { healthRoutes } from "./routes/health.ts";
import { inferenceRoutes } from "./routes/inference.ts";
import { repositoryRoutes } from "./routes/repository.ts";
import { tritonExtensionRoutes } from "./routes/triton-extensions.ts";

export type { AppDeps } from "./app-context.ts";

/**
 * The regional pool's HTTP app. Order of layers, outermost first: response counting by route and status,
 * `Connection: close` while draining; then the routers (health and metrics open to all; inference behind
 * the edge signature when a secret is set; model control behind the admin token). Every error becomes
 * `{"error", "code"}` here, in one place. In the server, the inference POSTs mostly reach `answers` through
 * the node:http fast path instead (regional/fast-path/), which keeps these same rules.
 */
export function createRegionalApp(deps: AppDeps, answers: InferenceAnswers): Hono<RegionalEnv> {
  // strict: false: `/v2/` and `/v2/models/digits/` answer as `/v2` and `/v2/models/digits` (clients join base
  // paths with a trailing slash), as Triton's routes do.
  const app = new Hono<RegionalEnv>({ strict: false });
  app.use("*", httpMetrics(deps.recorder), closeConnectionsWhile(deps.draining));

  app.route("/", tritonExtensionRoutes(deps));
  app.route("/", healthRoutes(deps));
  app.route("/", inferenceRoutes(deps, answers));
  app.route("/", repositoryRoutes(deps));

  app.notFound((c) => {
    throw new NotFound(`no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  });
  app.onError((err, c) => {
    const known = asServingError(err);
    if (!known) {
      deps.log("error", "unhandled error", { method: c.req.method, path: c.req.path, error: err.stack ?? String(err) });
    }
    return errorResponse(known ?? err);
  });
  return app;
}
