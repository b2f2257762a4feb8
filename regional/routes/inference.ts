import { setTimeout as sleep } from "node:timers/promises";
import { type Context, Hono } from "hono";
import { parseClassifyRequest, readClassifyInputs } from "../../protocol/classify-request.ts";
import { ServingError } from "../../protocol/errors.ts";
import { MODEL_VERSION_HEADER, ROLLOUT_HEADER, SERVED_BY_HEADER } from "../../protocol/headers.ts";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import { parseInferRequest, readInferInputs } from "../../protocol/infer-request.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
import { toInferResponse, toPredictions } from "../../protocol/responses.ts";
import { formatRolloutHeader } from "../../protocol/rollout/header.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import type { ClassifyResponse, ServedBy } from "../../protocol/types.ts";
import type { AppDeps, RegionalEnv } from "../app-context.ts";
import { nowUs } from "../clock.ts";
import type { Executed } from "../executor.ts";
import { admitInTime } from "../middleware/admit-in-time.ts";
import { bodyLimit } from "../middleware/body-limit.ts";
import { deadline } from "../middleware/deadline.ts";
import { edgeSignature } from "../middleware/signature-auth.ts";
import type { Lease } from "../model-version.ts";
import type { InferenceOutcome } from "../recorder.ts";

function outcomeOf(err: unknown): InferenceOutcome {
  if (err instanceof ServingError && err.code === "deadline_exceeded") return "expired";
  if (err instanceof ServingError && err.code === "queue_full") return "rejected";
  return "failed";
}

/**
 * `/v1/classify` and v2 `infer`. Layers, outermost first: admission by deadline (429 at once for what cannot
 * be answered in time), deadline clock, body limit (413),
 * edge signature (401, when a secret is set); then parse, lease the serving version, validate the rows
 * against it, and run them through its batcher.
 */
export function inferenceRoutes(deps: AppDeps): Hono<RegionalEnv> {
  const { repository, rollouts, limits } = deps;
  const servedBy: ServedBy = `regional:${deps.region}`;
  const app = new Hono<RegionalEnv>();
  const delayTiming = deps.delayMs > 0 ? `delay;dur=${deps.delayMs};desc="simulated distance", ` : "";

  const paths = ["/v1/classify", "/v2/models/:model/infer", "/v2/models/:model/versions/:version/infer"];
  // One admission for all three routes: they share the pool's time.
  const admit = admitInTime(deps.admission);
  for (const path of paths) {
    app.use(path, admit, deadline(), bodyLimit({ maxBytes: limits.maxBodyBytes }));
    if (deps.sharedSecret) app.use(path, edgeSignature({ secret: deps.sharedSecret }));
  }

  /**
   * Run `rows` on the leased version; counts the outcome and sets the answer's headers. Server-Timing is
   * written here rather than by hono/timing, whose per-metric quoting and bookkeeping cost about as much CPU
   * as serializing the answer (profiled at ~10k req/s).
   */
  async function run(c: Context<RegionalEnv>, lease: Lease, rows: InputRows): Promise<Executed> {
    const { recorder, version } = lease.model;
    // c.get, not c.var: Hono builds a fresh object of every variable on each c.var access.
    const receivedUs = c.get("receivedUs");
    recorder.pending(1);
    let outcome: InferenceOutcome = "failed";
    try {
      if (deps.delayMs > 0) await sleep(deps.delayMs);
      const result = await lease.model.infer(rows, c.get("deadlineUs"));
      outcome = "success";
      // The rollout's seam: count the answer and hand a copy to the shadow runner (which runs later).
      rollouts.afterAnswer(lease.model, rows, true);
      const rollout = rollouts.view(lease.model.name);
      if (rollout) c.header(ROLLOUT_HEADER, formatRolloutHeader(rollout));
      const totalMs = (nowUs() - receivedUs) / 1000;
      c.header(
        "server-timing",
        `${delayTiming}queue;dur=${result.queueMs.toFixed(3)}, ` +
          `compute;dur=${result.computeMs.toFixed(3)};desc="batch of ${result.batchRows}", ` +
          `total;dur=${totalMs.toFixed(3)};desc="regional"`,
      );
      c.header(SERVED_BY_HEADER, servedBy);
      c.header(MODEL_VERSION_HEADER, version);
      return result;
    } catch (err) {
      outcome = outcomeOf(err);
      if (outcome === "failed") rollouts.afterAnswer(lease.model, rows, false);
      throw err;
    } finally {
      recorder.pending(-1);
      recorder.request(outcome, (nowUs() - receivedUs) / 1e6);
    }
  }

  app.post("/v1/classify", async (c) => {
    const call = parseClassifyRequest(parseJsonBody(await c.req.arrayBuffer(), c.req.header("content-type")));
    const acquired = repository.acquire(call.model, call.version);
    let lease = acquired;
    try {
      const rows = readClassifyInputs(call.inputs, acquired.model.signature, limits);
      // The rollout's seam: during a canary the input's hash may pick the candidate.
      lease = rollouts.route(acquired, rows, call.version !== undefined);
      const { signature, version } = lease.model;
      const { probs } = await run(c, lease, rows);
      return c.json({
        model: call.model,
        version,
        ...(call.id !== undefined ? { id: call.id } : {}),
        predictions: toPredictions(probs, rows.batch, signature.labels),
        servedBy,
      } satisfies ClassifyResponse);
    } finally {
      lease.release();
    }
  });

  const infer = async (c: Context<RegionalEnv>, model: string, version?: string) => {
    const call = parseInferRequest(parseJsonBody(await c.req.arrayBuffer(), c.req.header("content-type")));
    const acquired = repository.acquire(model, version);
    let lease = acquired;
    try {
      const rows = readInferInputs(call, acquired.model.signature, limits);
      lease = rollouts.route(acquired, rows, version !== undefined);
      const { signature } = lease.model;
      const { probs } = await run(c, lease, rows);
      return c.json(
        toInferResponse({
          model,
          version: lease.model.version,
          id: call.request.id,
          outputName: signature.outputName,
          probs,
          batch: rows.batch,
          classes: signature.classes,
        }),
      );
    } finally {
      lease.release();
    }
  };
  app.post("/v2/models/:model/infer", (c) => infer(c, c.req.param("model")));
  app.post("/v2/models/:model/versions/:version/infer", (c) => infer(c, c.req.param("model"), c.req.param("version")));

  return refuseOtherMethods(app, Object.fromEntries(paths.map((p) => [p, ["POST"]])));
}
