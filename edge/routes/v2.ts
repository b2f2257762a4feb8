import { type Context, Hono } from "hono";
import pkg from "../../package.json";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import { parseInferRequest, readInferInputs } from "../../protocol/infer-request.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
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

v2.get("/", (c) => c.json({ name: "edgecascade-edge", version: pkg.version, extensions: [] } satisfies ServerMetadata));

v2.get("/health/live", (c) => c.json({ live: true }));

/** Ready once the edge model has loaded; the first call loads it (cold start, about half a second). */
v2.get("/health/ready", async (c) => {
  const ready = await c.var.runtime.model.load().then(
    () => true,
    () => false,
  );
  return c.json({ ready }, ready ? 200 : 503);
});

const metadata = (c: Context<AppEnv>) => {
  const rt = c.var.runtime;
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
  const rt = c.var.runtime;
  checkModel(rt, c.req.param("model")!, c.req.param("version"));
  const ready = await rt.model.load().then(
    () => true,
    () => false,
  );
  return c.json({ name: rt.modelName, ready }, ready ? 200 : 503);
};

const infer = async (c: Context<AppEnv>) => {
  const rt = c.var.runtime;
  const call = parseInferRequest(parseJsonBody(await c.req.arrayBuffer(), c.req.header("content-type")));
  const version = c.req.param("version");
  checkModel(rt, c.req.param("model")!, version);
  const rows = readInferInputs(call, rt.signature, DEFAULT_LIMITS);
  const served = await serve(rt, {
    rows,
    version,
    mode: call.cascade,
    location: locate(c),
    startedAt: c.var.startedAt,
  });
  applyServed(c, served);
  return c.json(
    toInferResponse({
      model: rt.modelName,
      version: served.version,
      id: call.request.id,
      outputName: rt.signature.outputName,
      probs: served.probs,
      batch: served.batch,
      classes: rt.signature.classes,
    }),
  );
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
