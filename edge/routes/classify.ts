import { Hono } from "hono";
import { parseClassifyRequest, readClassifyInputs } from "../../protocol/classify-request.ts";
import { refuseOtherMethods } from "../../protocol/http-errors.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { toPredictions } from "../../protocol/responses.ts";
import type { ClassifyResponse } from "../../protocol/types.ts";
import type { AppEnv } from "../app-env.ts";
import { serve } from "../serve.ts";
import { applyServed, checkModel, limitBody, locate, readJson } from "./answer.ts";

/** `POST /v1/classify`: the simple JSON API for apps. */
export const classify = new Hono<AppEnv>();

classify.post("/classify", limitBody, async (c) => {
  const rt = c.var.runtime;
  const call = parseClassifyRequest(await readJson(c));
  checkModel(rt, call.model, call.version);
  const rows = readClassifyInputs(call.inputs, rt.signature, DEFAULT_LIMITS);
  const served = await serve(rt, { rows, mode: call.cascade, location: locate(c), startedAt: c.var.startedAt });
  applyServed(c, served);
  const body: ClassifyResponse = {
    model: rt.modelName,
    version: served.version,
    ...(call.id !== undefined ? { id: call.id } : {}),
    predictions: toPredictions(served.probs, served.batch, rt.signature.labels),
    servedBy: served.servedBy,
  };
  return c.json(body);
});

refuseOtherMethods(classify, { "/classify": ["POST"] });
