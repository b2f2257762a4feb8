import { type Context, Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import pkg from "../../package.json";
import {
  encodeInferResponse,
  INFERENCE_HEADER_LENGTH,
  readInferBody,
  wantsBinaryOutput,
} from "../../protocol/binary-tensor.ts";
import { decodeBody, requestCoding } from "../../protocol/content-coding.ts";
import { ServingError } from "../../protocol/errors.ts";
import { checkNamedModel, parseInferRequest, readInferInputs } from "../../protocol/infer-request.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { toInferResponse } from "../../protocol/responses.ts";
import { tritonModelConfig } from "../../protocol/triton-config.ts";
import type { ModelMetadata, ServerMetadata } from "../../protocol/types.ts";
import type { AppEnv } from "../app-env.ts";
import { tritonAnswerEncoding } from "../middleware/answer-encoding.ts";
import { limitBody } from "../middleware/body-limit.ts";
import type { ServedModel } from "../models/served-model.ts";
import { BUDGET_HEADER } from "../regions/budget.ts";
import { serve } from "../serve.ts";
import { mayCall } from "../tenants/keys.ts";
import { contextLocation } from "./context-location.ts";
import { lookupModel } from "./lookup.ts";
import { applyServed } from "./served-headers.ts";

/**
 * Open Inference Protocol v2 (KServe), REST: server and model metadata, health, inference, Triton's model
 * configuration; answers compressed by Triton's rule (middleware/answer-encoding.ts).
 */
export const v2 = new Hono<AppEnv>();

v2.use("*", tritonAnswerEncoding());

v2.get("/", async (c) =>
  c.json({
    name: "edgecascade-edge",
    version: pkg.version,
    // Not "statistics": those are the pools' (GET /v2/models/stats below says so).
    extensions: ["binary_tensor_data", "model_configuration"],
    // Said where operators look: a Worker without MODEL_PUBLIC_KEY loads unsigned edge models.
    modelSignatures: await c.get("runtime").modelSignatures(),
  } satisfies ServerMetadata & Record<string, unknown>),
);

v2.get("/health/live", (c) => c.json({ live: true }));

/** Whether a model's edge variant is loaded (loading it if not); a model without one is always ready here. */
const edgeReady = (model: ServedModel) =>
  model.edge
    ? model.edge.load().then(
        () => true,
        () => false,
      )
    : Promise.resolve(true);

/**
 * Ready once the edge variants that fit in EDGE_SESSION_MEMORY_MB together have loaded (in name order; the rest
 * load on their first request, as every evicted one does); the first call loads them (cold start, about half a
 * second for the samples). 503 when one of them cannot load.
 */
v2.get("/health/ready", async (c) => {
  const rt = c.get("runtime");
  let all = true;
  for (const model of rt.models.all()) {
    // One at a time: each is counted before the next asks whether it fits.
    if (model.edge && rt.sessions.fitsWithoutEviction(model.edge)) all = (await edgeReady(model)) && all;
  }
  const { resident } = rt.sessions.snapshot();
  const variants = rt.models.all().filter((m) => m.edge).length;
  return c.json({ ready: all, sessions: { resident, variants } }, all ? 200 : 503);
});

const metadata = (c: Context<AppEnv>) =>
  c.json(lookupModel(c, c.req.param("model")!, c.req.param("version")).describe() satisfies ModelMetadata);

const modelReady = async (c: Context<AppEnv>) => {
  const model = lookupModel(c, c.req.param("model")!, c.req.param("version"));
  const ready = await edgeReady(model);
  return c.json({ name: model.name, ready }, ready ? 200 : 503);
};

/**
 * Triton's repository index, read-only at the edge: every model this key may call, described as
 * `/v2/models/{name}` describes it, with its edge variant (or null: every request is forwarded).
 */
v2.post("/repository/index", (c) => {
  const { models } = c.get("tenant");
  const entries = c
    .get("runtime")
    .models.all()
    .filter((m) => mayCall(models, m.name))
    .map((m) => {
      const { versions, ...description } = m.describe();
      const edge = m.edge
        ? { name: m.edge.config.name, version: m.edge.version, threshold: m.edge.calibration.threshold }
        : null;
      return { ...description, version: versions[0], state: "READY", edge };
    });
  return c.json(entries);
});

/** Inference, with JSON or binary tensor data in and out (protocol/binary-tensor.ts). */
const infer = async (c: Context<AppEnv>) => {
  const rt = c.get("runtime");
  const coding = requestCoding(c.req.header("content-encoding"));
  const body = await decodeBody(new Uint8Array(await c.req.arrayBuffer()), coding, DEFAULT_LIMITS.maxBodyBytes);
  const { json, binary } = readInferBody(body, c.req.header(INFERENCE_HEADER_LENGTH), c.req.header("content-type"));
  const call = parseInferRequest(json);
  const version = c.req.param("version");
  checkNamedModel(call, c.req.param("model")!, version);
  const model = lookupModel(c, c.req.param("model")!, version);
  const rows = readInferInputs(call, model.io, DEFAULT_LIMITS, binary);
  const binaryOutput = wantsBinaryOutput(call.request, model.io.outputName);
  const served = await serve(rt, model, {
    rows,
    version,
    mode: call.cascade,
    locate: () => contextLocation(c),
    startedAt: c.get("startedAt"),
    budgetMs: rt.budgetMs(c.req.header(BUDGET_HEADER)),
    tenant: c.get("tenant").name,
    trace: c.get("trace"),
  });
  applyServed(c, model, served, rows);
  const response = toInferResponse({
    model: model.name,
    version: served.version,
    id: call.request.id,
    outputName: model.io.outputName,
    probs: served.probs,
    batch: served.batch,
    classes: model.io.classes,
    binary: binaryOutput,
  });
  const answer = encodeInferResponse(response, Float32Array.from(served.probs), binaryOutput);
  return c.body(answer.body, 200, answer.headers);
};

/**
 * Triton's model configuration of a model as this edge serves it: its config.json, the request batch limit, no
 * dynamic batching (rows the edge forwards are batched at the pools: their `/config` says how).
 */
const config = (c: Context<AppEnv>) => {
  const model = lookupModel(c, c.req.param("model")!, c.req.param("version"));
  return c.json(
    tritonModelConfig(model.config, {
      maxBatchSize: Math.min(DEFAULT_LIMITS.maxBatch, model.io.maxBatchSize),
      kind: "KIND_CPU",
      version: model.servedVersion,
    }),
  );
};

/**
 * Triton's statistics stay with the pools, which count every run of the full models: an isolate's own counts
 * are one of many (per data centre, per isolate) and are in `/status`. A 501 that says where to ask, rather than
 * a 404 that reads like a missing model.
 */
const statistics = () => {
  throw new ServingError(
    501,
    "not_implemented",
    "inference statistics are the regional pools': GET /v2/models/stats on a pool (the edge's own counts are in /status)",
  );
};
v2.get("/models/stats", statistics);

const bases = ["/models/:model", "/models/:model/versions/:version"];
for (const base of bases) {
  v2.get(base, metadata);
  v2.get(`${base}/ready`, modelReady);
  v2.get(`${base}/config`, config);
  v2.get(`${base}/stats`, statistics);
  v2.post(`${base}/infer`, limitBody(), infer);
}
refuseOtherMethods(v2, {
  "/": ["GET"],
  "/health/live": ["GET"],
  "/health/ready": ["GET"],
  "/repository/index": ["POST"],
  "/models/stats": ["GET"],
  ...Object.fromEntries(
    bases.flatMap((b) => [
      [b, ["GET"]],
      [`${b}/ready`, ["GET"]],
      [`${b}/config`, ["GET"]],
      [`${b}/stats`, ["GET"]],
      [`${b}/infer`, ["POST"]],
    ]),
  ),
});
