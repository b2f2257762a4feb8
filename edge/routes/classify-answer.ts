import { parseClassifyRequest, readClassifyInputs } from "../../protocol/classify-request.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { classifyAnswerJson, predictionsJson } from "../../protocol/responses.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import type { Tenant } from "../middleware/api-key.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { EdgeTrace } from "../observe/trace-context.ts";
import type { RequestLocation } from "../regions/region.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { type Served, serve } from "../serve.ts";
import { findModel } from "./lookup.ts";

/** What answering a `/v1/classify` body needs of its request, whichever path (Hono route or fast path) took it. */
export interface ClassifyRequestContext {
  runtime: EdgeRuntime;
  tenant: Tenant;
  /** Unix ms when the request arrived. */
  startedAt: number;
  /** The request's `x-edgecascade-budget-ms` header (EdgeRuntime.budgetMs reads it). */
  budgetHeader: string | null | undefined;
  /** Where the request comes from; asked only when a region is chosen. */
  locate: () => RequestLocation;
  /** The request's `x-edgecascade-warm-up` header: `1` keeps its region calls' times out of the evidence. */
  warmUpHeader: string | null | undefined;
  /** Told the model the body names before it is looked up: refusals count against it. */
  named(model: string): void;
  /** The request's trace: a forward carries it to the region. */
  trace: EdgeTrace;
}

export interface ClassifyAnswer {
  model: ServedModel;
  served: Served;
  /** The rows answered (an audit re-asks them). */
  rows: InputRows;
  /** The answer's JSON text (a `ClassifyResponse`). */
  body: string;
}

/**
 * A `/v1/classify` body (its bytes and content type) answered through the tiers: 415/400 for what is not a
 * JSON call, 404/403 for a model the caller may not have, 400/413 for rows that do not fit it, then `serve`.
 */
export async function answerClassify(
  request: ClassifyRequestContext,
  bytes: ArrayBuffer,
  contentType: string | null | undefined,
): Promise<ClassifyAnswer> {
  const budgetMs = request.runtime.budgetMs(request.budgetHeader);
  const call = parseClassifyRequest(parseJsonBody(bytes, contentType));
  request.named(call.model);
  const model = findModel(request.runtime, request.tenant, call.model, call.version);
  const rows = readClassifyInputs(call.inputs, model.io, DEFAULT_LIMITS);
  const served = await serve(request.runtime, model, {
    rows,
    version: call.version,
    mode: call.cascade,
    locate: request.locate,
    startedAt: request.startedAt,
    budgetMs,
    warmUp: request.warmUpHeader === "1",
    tenant: request.tenant.name,
    trace: request.trace,
  });
  const predictions = served.predictionsJson ?? predictionsJson(served.probs, served.batch, model.io.labels);
  const fields = { model: model.name, version: served.version, id: call.id, servedBy: served.servedBy };
  return { model, served, rows, body: classifyAnswerJson(fields, predictions) };
}
