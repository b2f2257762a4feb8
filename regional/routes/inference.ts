import { type Context, Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import { INFERENCE_HEADER_LENGTH } from "../../protocol/binary-tensor.ts";
import { AUDIT_HEADER } from "../../protocol/headers.ts";
import type { AppDeps, RegionalEnv } from "../app-context.ts";
import type { InferenceAnswer, InferenceAnswers, InferenceInput } from "../inference-answers.ts";
import { admitInTime } from "../middleware/admit-in-time.ts";
import { bodyLimit } from "../middleware/body-limit.ts";
import { requestDeadline } from "../middleware/request-deadline.ts";
import { requestTracing } from "../middleware/request-tracing.ts";
import { edgeSignature } from "../middleware/signature-auth.ts";

/** The inference routes' patterns; the fast path (regional/fast-path/) counts its answers under the same ones. */
export const INFERENCE_ROUTES = {
  classify: "/v1/classify",
  infer: "/v2/models/:model/infer",
  inferVersion: "/v2/models/:model/versions/:version/infer",
} as const;

/**
 * `/v1/classify` and v2 `infer` in Hono. Layers, outermost first: deadline clock (400 for a malformed deadline
 * header), admission by deadline (429 at once for what cannot be answered in time; one admission for the pool,
 * shared with the fast path), the request's trace (regional/tracing/, when tracing is on), body limit (413),
 * edge signature (401, when a secret is set); then `answers` (regional/inference-answers.ts) parses,
 * validates and runs the rows. Most POSTs never get here: the node:http fast path answers them through the
 * same `answers` and hands over only what it does not take (chunked bodies, a query string, encoded paths,
 * unusual Host headers; see regional/fast-path/route.ts).
 */
export function inferenceRoutes(deps: AppDeps, answers: InferenceAnswers): Hono<RegionalEnv> {
  const app = new Hono<RegionalEnv>();
  const paths = Object.values(INFERENCE_ROUTES);
  const admit = admitInTime(deps.admission);
  for (const path of paths) {
    app.use(
      path,
      requestDeadline(),
      admit,
      requestTracing(deps.tracing),
      bodyLimit({ maxBytes: deps.limits.maxBodyBytes }),
    );
    if (deps.sharedSecret) app.use(path, edgeSignature({ secret: deps.sharedSecret }));
  }

  const input = async (c: Context<RegionalEnv>): Promise<InferenceInput> => ({
    contentType: c.req.header("content-type"),
    jsonLength: c.req.header(INFERENCE_HEADER_LENGTH),
    body: new Uint8Array(await c.req.arrayBuffer()),
    contentEncoding: c.req.header("content-encoding"),
    // c.get, not c.var: Hono builds a fresh object of every variable on each c.var access.
    receivedUs: c.get("receivedUs"),
    deadlineUs: c.get("deadlineUs"),
    admitted: c.get("admitted"),
    trace: c.get("trace"),
    audit: c.req.header(AUDIT_HEADER),
  });
  const reply = (c: Context<RegionalEnv>, answer: InferenceAnswer) => c.body(answer.body, 200, answer.headers);

  app.post(INFERENCE_ROUTES.classify, async (c) => reply(c, await answers.classify(await input(c))));
  app.post(INFERENCE_ROUTES.infer, async (c) => reply(c, await answers.infer(await input(c), c.req.param("model"))));
  app.post(INFERENCE_ROUTES.inferVersion, async (c) =>
    reply(c, await answers.infer(await input(c), c.req.param("model"), c.req.param("version"))),
  );

  return refuseOtherMethods(app, Object.fromEntries(paths.map((p) => [p, ["POST"]])));
}
