import { Hono } from "hono";
import { parseClassifyRequest, readClassifyInputs } from "../../protocol/classify-request.ts";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { toPredictions } from "../../protocol/responses.ts";
import type { ClassifyResponse } from "../../protocol/types.ts";
import type { AppEnv } from "../app-env.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { locate } from "../regions/locate.ts";
import { serve } from "../serve.ts";
import { lookupModel } from "./lookup.ts";
import { applyServed } from "./served-headers.ts";

/** `POST /v1/classify`: the simple JSON API for apps. */
export const classify = new Hono<AppEnv>();

classify.post("/classify", limitBody(), async (c) => {
  const rt = c.get("runtime");
  const call = parseClassifyRequest(parseJsonBody(await c.req.arrayBuffer(), c.req.header("content-type")));
  const model = lookupModel(c, call.model, call.version);
  const rows = readClassifyInputs(call.inputs, model.signature, DEFAULT_LIMITS);
  const served = await serve(rt, model, {
    rows,
    version: call.version,
    mode: call.cascade,
    location: locate(c),
    startedAt: c.var.startedAt,
  });
  applyServed(c, model, served);
  const body: ClassifyResponse = {
    model: model.name,
    version: served.version,
    ...(call.id !== undefined ? { id: call.id } : {}),
    predictions: toPredictions(served.probs, served.batch, model.signature.labels),
    servedBy: served.servedBy,
  };
  return c.json(body);
});

refuseOtherMethods(classify, { "/classify": ["POST"] });
