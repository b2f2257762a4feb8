import { type Context, Hono } from "hono";
import pkg from "../../package.json";
import {
  encodeInferResponse,
  INFERENCE_HEADER_LENGTH,
  readInferBody,
  wantsBinaryOutput,
} from "../../protocol/binary-tensor.ts";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import { parseInferRequest, readInferInputs } from "../../protocol/infer-request.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { toInferResponse } from "../../protocol/responses.ts";
import type { ModelMetadata, ServerMetadata } from "../../protocol/types.ts";
import type { AppEnv } from "../app-env.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { locate } from "../regions/locate.ts";
import { serve } from "../serve.ts";
import { checkModel } from "./model-check.ts";
import { applyServed } from "./served-headers.ts";

/** Open Inference Protocol v2 (KServe), REST: server and model metadata, health, inference. */
export const v2 = new Hono<AppEnv>();

v2.get("/", (c) =>
  c.json({
    name: "edgecascade-edge",
    version: pkg.version,
    extensions: ["binary_tensor_data"],
  } satisfies ServerMetadata),
);

v2.get("/health/live", (c) => c.json({ live: true }));

/** Ready once the edge model has loaded; the first call loads it (cold start, about half a second). */
v2.get("/health/ready", async (c) => {
  const ready = await c
    .get("runtime")
    .model.load()
    .then(
      () => true,
      () => false,
    );
  return c.json({ ready }, ready ? 200 : 503);
});

const metadata = (c: Context<AppEnv>) => {
  const rt = c.get("runtime");
  checkModel(rt, c.req.param("model")!, c.req.param("version"));
  const { config } = rt.model;
  return c.json({
    name: rt.modelName,
    versions: [rt.servedVersion],
    platform: config.platform,
    inputs: config.inputs,
    outputs: config.outputs,
  } satisfies ModelMetadata);
};

const modelReady = async (c: Context<AppEnv>) => {
  const rt = c.get("runtime");
  checkModel(rt, c.req.param("model")!, c.req.param("version"));
  const ready = await rt.model.load().then(
    () => true,
    () => false,
  );
  return c.json({ name: rt.modelName, ready }, ready ? 200 : 503);
};

/** Inference, with JSON or binary tensor data in and out (protocol/binary-tensor.ts). */
const infer = async (c: Context<AppEnv>) => {
  const rt = c.get("runtime");
  const body = new Uint8Array(await c.req.arrayBuffer());
  const { json, binary } = readInferBody(body, c.req.header(INFERENCE_HEADER_LENGTH), c.req.header("content-type"));
  const call = parseInferRequest(json);
  const version = c.req.param("version");
  checkModel(rt, c.req.param("model")!, version);
  const rows = readInferInputs(call, rt.signature, DEFAULT_LIMITS, binary);
  const binaryOutput = wantsBinaryOutput(call.request, rt.signature.outputName);
  const served = await serve(rt, {
    rows,
    version,
    mode: call.cascade,
    locate: () => locate(c),
    startedAt: c.get("startedAt"),
  });
  applyServed(c, served);
  const response = toInferResponse({
    model: rt.modelName,
    version: served.version,
    id: call.request.id,
    outputName: rt.signature.outputName,
    probs: served.probs,
    batch: served.batch,
    classes: rt.signature.classes,
    binary: binaryOutput,
  });
  const answer = encodeInferResponse(response, Float32Array.from(served.probs), binaryOutput);
  return c.body(answer.body, 200, answer.headers);
};

const bases = ["/models/:model", "/models/:model/versions/:version"];
for (const base of bases) {
  v2.get(base, metadata);
  v2.get(`${base}/ready`, modelReady);
  v2.post(`${base}/infer`, limitBody(), infer);
}
refuseOtherMethods(v2, {
  "/": ["GET"],
  "/health/live": ["GET"],
  "/health/ready": ["GET"],
  ...Object.fromEntries(
    bases.flatMap((b) => [
      [b, ["GET"]],
      [`${b}/ready`, ["GET"]],
      [`${b}/infer`, ["POST"]],
    ]),
  ),
});
