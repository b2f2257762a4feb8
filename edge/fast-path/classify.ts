import { asServingError } from "../../hono-shared/hono-error.ts";
import { bodyTooLarge } from "../../protocol/body-limit.ts";
import { errorAnswer } from "../../protocol/error-answer.ts";
import { QUOTA_HEADER, TRACEPARENT_HEADER, TRACESTATE_HEADER, WARM_UP_HEADER } from "../../protocol/headers.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import { API_CORS } from "../api-cors.ts";
import type { Env } from "../env.ts";
import { anonymousCaller, identifyCaller, type Tenant } from "../middleware/api-key.ts";
import { corsAnswerHeaders } from "../middleware/cors.ts";
import { checkRateLimits, checkTenantLimits, hasRateLimits, hasTenantLimits } from "../middleware/rate-limit.ts";
import { recordError } from "../observe/record.ts";
import type { RequestFacts } from "../observe/request-facts.ts";
import { traceTimingEntry } from "../observe/trace-context.ts";
import { BUDGET_HEADER } from "../regions/budget.ts";
import { type CfLocation, requestLocation } from "../regions/request-location.ts";
import { answerClassify } from "../routes/classify-answer.ts";
import { settleServed } from "../routes/served-headers.ts";
import { type EdgeRuntime, runtimeFor } from "../runtime.ts";
import { AnswerHeaders } from "./answer-headers.ts";

const corsHeaders = corsAnswerHeaders(API_CORS);

function withHeader(response: Response, name: string, value: string): Response {
  const headers = new Headers(response.headers);
  headers.set(name, value);
  return new Response(response.body, { status: response.status, headers });
}
const answerHeaders = new AnswerHeaders();

/**
 * POST `/v1/classify` without the Hono app (which requests: `takesFastClassify`): the same layers as the
 * app's middleware and route, in the same order and with the same code: the isolate's runtime, CORS, API key,
 * rate limits, the body limit from Content-Length, then `answerClassify`; its answers' headers and counts are
 * the route's (`servedHeaders`, built once per kind of answer by `AnswerHeaders`; `settleServed`), and errors
 * become the one `errorAnswer`, counted as the app's `onError` counts them. test/edge/fast-path.test.ts sends
 * every outcome along both paths and compares.
 *
 * Why: a cache hit or an edge-model answer is a few tens of µs of the Worker's own work; Hono's Context,
 * routing, middleware chain, body cache and header copying cost about as much again on every such request
 * (docs/performance.md), and the Worker's CPU time is what a deployment pays for.
 */
export async function fastClassify(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const startedAt = Date.now();
  let runtime: EdgeRuntime | undefined;
  let tenant: Tenant | undefined;
  let model: string | undefined;
  let cors: Record<string, string> = {};
  let facts: RequestFacts | undefined;
  try {
    const rt = runtimeFor(env);
    runtime = rt;
    const headers = request.headers;
    const locate = () =>
      requestLocation(
        request.cf as CfLocation | undefined,
        headers.get("x-edgecascade-location"),
        rt.options.allowLocationOverride,
      );
    facts = {
      trace: rt.trace(headers.get(TRACEPARENT_HEADER), headers.get(TRACESTATE_HEADER), ctx),
      startedAt,
      colo: () => (request.cf as CfLocation | undefined)?.colo,
      locate,
    };
    const origin = headers.get("origin") ?? "";
    cors = corsHeaders(origin, rt.options.corsOrigins);
    // Without keys and limits (each a setting of the isolate) nothing here waits: no promise is made for them.
    const keys = rt.options.apiKeys;
    const caller =
      keys.length === 0
        ? anonymousCaller(headers.get("cf-connecting-ip"))
        : await identifyCaller(keys, {
            authorization: headers.get("authorization"),
            apiKey: headers.get("x-api-key"),
            connectingIp: headers.get("cf-connecting-ip"),
          });
    tenant = caller.tenant;
    if (hasRateLimits(rt.rateLimiter, caller))
      await checkRateLimits(rt.rateLimiter, caller, rt.options.rateLimitPeriodS);
    const quota = hasTenantLimits(rt.tenantLimits, caller.tenant.name)
      ? await checkTenantLimits(rt.tenantLimits, caller.tenant.name, {
          periodS: rt.options.rateLimitPeriodS,
          countsAgainstQuota: true,
          defer: (work) => ctx.waitUntil(work),
        })
      : "metered";
    if (Number.parseInt(headers.get("content-length") ?? "0", 10) > DEFAULT_LIMITS.maxBodyBytes)
      throw bodyTooLarge(DEFAULT_LIMITS.maxBodyBytes);
    const answered = await answerClassify(
      {
        runtime: rt,
        tenant: caller.tenant,
        startedAt,
        budgetHeader: headers.get(BUDGET_HEADER),
        locate,
        warmUpHeader: headers.get(WARM_UP_HEADER),
        named: (name) => {
          model = name;
        },
        trace: facts.trace,
      },
      await request.arrayBuffer(),
      headers.get("content-type"),
    );
    settleServed(rt, answered.model, caller.tenant.name, answered.served, (work) => ctx.waitUntil(work), {
      facts,
      rows: answered.rows,
    });
    const response = new Response(answered.body, {
      headers: answerHeaders.for(answered.model, answered.served, cors, origin !== ""),
    });
    // Every answer names its trace; the other entries are shared by every answer of a kind (AnswerHeaders).
    response.headers.append("server-timing", traceTimingEntry(facts.trace));
    // Rare (the quota object unreachable): the answer headers are shared between answers, so this one gets a copy.
    if (quota === "unmetered") return withHeader(response, QUOTA_HEADER, "unmetered");
    return response;
  } catch (err) {
    const known = asServingError(err);
    if (!known) console.error("unhandled error on POST /v1/classify:", err);
    const { status, headers, body } = errorAnswer(known ?? err);
    runtime?.counts.failed(model, tenant?.name, status);
    recordError(runtime, { model, tenant: tenant?.name, status }, facts);
    const timing: Record<string, string> = facts ? { "server-timing": traceTimingEntry(facts.trace) } : {};
    return new Response(body, { status, headers: { ...headers, ...cors, ...timing } });
  }
}
