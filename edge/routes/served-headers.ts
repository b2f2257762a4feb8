import type { Context } from "hono";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../../protocol/headers.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import type { AppEnv } from "../app-env.ts";
import { auditAnswer } from "../audit/audit.ts";
import type { ServedModel } from "../models/served-model.ts";
import { recordAnswer } from "../observe/record.ts";
import type { RequestFacts } from "../observe/request-facts.ts";
import type { EdgeRuntime } from "../runtime.ts";
import type { Served } from "../serve.ts";
import { contextFacts } from "./context-location.ts";
import { serverTimingValue } from "./server-timing.ts";

/**
 * Headers of an answer: who served it, the model version, why it is degraded, and Server-Timing (`cache`,
 * `edge`, `regional;desc="<region>"`, `hedge`; browsers' Timing-Allow-Origin is CORS's, middleware/cors.ts).
 */
export function servedHeaders(model: ServedModel, served: Served): Record<string, string> {
  const headers: Record<string, string> = {
    [SERVED_BY_HEADER]: served.servedBy,
    [MODEL_VERSION_HEADER]: served.version,
    "server-timing": serverTimingValue(served.trace, model.edge?.label),
  };
  if (served.degraded) headers[DEGRADED_HEADER] = served.degraded;
  return headers;
}

/**
 * How long a cold isolate waits after a forwarded answer before creating its edge variant's session. Creating it
 * is one synchronous call of tens of ms on the isolate's thread; started at once (or after a 0 or 5 ms timer) it
 * ran before the answer had left workerd, and the first client waited for it (bench:cold, Miniflare: 500–800 ms
 * instead of 40–110). After 50 ms the answer is out.
 */
const SESSION_AFTER_ANSWER_MS = 50;

/**
 * What follows an answer: count it for the model and the tenant, write its data point (edge/observe/record.ts),
 * and hand the shared-cache write, a cold edge variant's load and an audit (edge/audit/) to `waitUntil`
 * (undefined outside a Worker: they then finish on their own).
 */
export function settleServed(
  runtime: EdgeRuntime,
  model: ServedModel,
  tenant: string,
  served: Served,
  waitUntil: ((work: Promise<unknown>) => void) | undefined,
  request?: { facts: RequestFacts; rows: InputRows },
): void {
  runtime.counts.answered(model.name, tenant, served.servedBy);
  // Edge variants newer than those loaded, read from the registry and started after this answer has gone.
  const registryWork = runtime.registry?.takeWork();
  if (registryWork)
    waitUntil?.(new Promise((resolve) => setTimeout(resolve, SESSION_AFTER_ANSWER_MS)).then(registryWork));
  if (request) {
    recordAnswer(runtime, model, tenant, served, request.facts);
    const audit = auditAnswer(runtime, model, tenant, served, request.rows, request.facts);
    if (audit) waitUntil?.(audit);
  }
  if (served.pending) {
    const write = served.pending.catch((err: unknown) => console.warn(`cache write failed: ${(err as Error).message}`));
    waitUntil?.(write);
  }
  if (served.warm) {
    const model = served.warm;
    const load = new Promise((resolve) => setTimeout(resolve, SESSION_AFTER_ANSWER_MS))
      .then(() => model.load())
      .catch((err: unknown) => console.warn(`edge model load failed: ${(err as Error).message}`));
    waitUntil?.(load);
  }
}

/** `servedHeaders` on a route's answer, then `settleServed` (the app names the trace, middleware/trace.ts). */
export function applyServed(c: Context<AppEnv>, model: ServedModel, served: Served, rows: InputRows): void {
  const runtime = c.get("runtime");
  for (const [name, value] of Object.entries(servedHeaders(model, served))) c.header(name, value);
  let waitUntil: ((work: Promise<unknown>) => void) | undefined;
  try {
    const ctx = c.executionCtx;
    waitUntil = (work) => ctx.waitUntil(work);
  } catch {
    // No execution context (outside a Worker).
  }
  settleServed(runtime, model, c.get("tenant").name, served, waitUntil, { facts: contextFacts(c), rows });
}
