import { Hono } from "hono";
import { asServingError } from "../hono-shared/hono-error.ts";
import { errorResponse } from "../protocol/error-answer.ts";
import { NotFound } from "../protocol/errors.ts";
import { API_CORS } from "./api-cors.ts";
import type { AppEnv } from "./app-env.ts";
import { demoRoutes } from "./demo/routes.ts";
import { apiKey } from "./middleware/api-key.ts";
import { cors } from "./middleware/cors.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
import { isolateRuntime } from "./middleware/runtime.ts";
import { recordError } from "./observe/record.ts";
import { classify } from "./routes/classify.ts";
import { contextFacts } from "./routes/context-location.ts";
import { status } from "./routes/status.ts";
import { v2 } from "./routes/v2.ts";

/**
 * The edge Worker's HTTP app (plain POST /v1/classify takes the fast path in worker.ts, with the same layers).
 * Order: runtime (parsed env, arrival time), CORS (answers preflights before
 * auth), then API key and rate limit on the data routes; the routes write Server-Timing themselves
 * (routes/served-headers.ts). Health and server metadata stay
 * open for load balancers. Every error becomes `{error, code}` in the one onError.
 */
/** The paths whose requests get a data point: classify and infer. */
const INFERENCE_PATH = /^\/(v1\/classify|v2\/models\/[^/]+(\/versions\/[^/]+)?\/infer)\/?$/;

// strict: false: `/v2/` and `/v2/models/digits/` answer as without the slash, as on Triton and the pools.
export const app = new Hono<AppEnv>({ strict: false });

app.use(isolateRuntime());
app.use(cors(API_CORS));
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
  const known = asServingError(err);
  if (!known) console.error(`unhandled error on ${c.req.method} ${c.req.path}:`, err);
  const response = errorResponse(known ?? err);
  // Requests that named a model or came with a key count as that model's and tenant's refusals or failures.
  const runtime = c.get("runtime");
  runtime?.counts.failed(c.get("model"), c.get("tenant")?.name, response.status);
  // An inference request's data point, refused or failed as it is (edge/observe/record.ts).
  if (c.get("trace") && INFERENCE_PATH.test(c.req.path)) {
    const error = { model: c.get("model"), tenant: c.get("tenant")?.name, status: response.status };
    recordError(runtime, error, contextFacts(c));
  }
  return response;
});
