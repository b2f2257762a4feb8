import { Hono } from "hono";
import { cors } from "hono/cors";
import { timing } from "hono/timing";
import { NotFound } from "../protocol/errors.ts";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../protocol/headers.ts";
import { asServingError, errorResponse } from "../protocol/http-errors.ts";
import type { AppEnv } from "./app-env.ts";
import { demoRoutes } from "./demo/routes.ts";
import { apiKey } from "./middleware/api-key.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
import { isolateRuntime } from "./middleware/runtime.ts";
import { classify } from "./routes/classify.ts";
import { status } from "./routes/status.ts";
import { v2 } from "./routes/v2.ts";

const allowedOrigin = (origin: string, allowed: string[] | "*") =>
  allowed === "*" ? "*" : allowed.includes(origin) ? origin : null;

/**
 * The edge Worker's HTTP app. Order: runtime (parsed env, arrival time), CORS (answers preflights before
 * auth), Server-Timing, then API key and rate limit on the data routes. Health and server metadata stay
 * open for load balancers. Every error becomes `{error, code}` in the one onError.
 */
export const app = new Hono<AppEnv>();

app.use(isolateRuntime());
app.use(
  cors({
    origin: (origin, c) => allowedOrigin(origin, c.var.runtime.options.corsOrigins),
    allowMethods: ["GET", "POST", "OPTIONS"],
    allowHeaders: ["content-type", "authorization", "x-api-key", "x-edgecascade-location"],
    exposeHeaders: ["server-timing", SERVED_BY_HEADER, MODEL_VERSION_HEADER, DEGRADED_HEADER, "retry-after"],
    maxAge: 600,
  }),
);
// Timing-Allow-Origin lets browser code read Server-Timing through the Resource Timing API. No `total`:
// inside a Worker the clock only moves on I/O, so a total would hide all CPU work (docs/edge.md).
app.use(
  timing({
    total: false,
    enabled: (c) => (c.get("metric")?.headers.length ?? 0) > 0,
    crossOrigin: (c) => {
      const origins = c.var.runtime.options.corsOrigins;
      return origins === "*" ? "*" : origins.join(", ");
    },
  }),
);
for (const path of ["/v1/*", "/v2/models/*", "/v2/repository/*", "/status", "/status/*"]) app.use(path, apiKey());
for (const path of ["/v1/*", "/v2/models/*"]) app.use(path, rateLimit());

app.route("/v1", classify);
app.route("/v2", v2);
app.route("/status", status);
app.route("/", demoRoutes);

app.notFound((c) => {
  throw new NotFound(`no route ${c.req.method} ${c.req.path}`);
});

app.onError((err, c) => {
  if (!asServingError(err)) console.error(`unhandled error on ${c.req.method} ${c.req.path}:`, err);
  const response = errorResponse(err);
  // Requests that named a model or came with a key count as that model's and tenant's refusals or failures.
  c.get("runtime")?.counts.failed(c.get("model"), c.get("tenant")?.name, response.status);
  return response;
});
