import { type AnswerKey, answerKey } from "../protocol/cache-key.ts";
import { edgeIsConfident } from "../protocol/cascade-rule.ts";
import { BadRequest, NotReady } from "../protocol/errors.ts";
import { float32Data, predictionsJson, topClass } from "../protocol/responses.ts";
import type { InputRows } from "../protocol/tensor.ts";
import type { CascadeMode, ServedBy } from "../protocol/types.ts";
import type { CacheTier } from "./cache/response-cache.ts";
import { cascadeDecision } from "./cascade/decision.ts";
import { type DegradedReason, degradedReason, NoRegionAnswered, type RegionError } from "./forward/errors.ts";
import type { Forwarded } from "./forward/hedge.ts";
import type { EdgeVariant } from "./inference/edge-variant.ts";
import type { ServedModel } from "./models/served-model.ts";
import { type EdgeTrace, traceHeaders } from "./observe/trace-context.ts";
import { forwardDeadline } from "./regions/client-reserve.ts";
import { regionOrder } from "./regions/order.ts";
import type { RequestLocation } from "./regions/region.ts";
import type { EdgeRuntime } from "./runtime.ts";

export interface ServeRequest {
  rows: InputRows;
  /** The version the client pinned (already checked against the served version); undefined: the served one. */
  version?: string;
  mode: CascadeMode;
  /** Where the request comes from; only asked when a region is chosen (reading `request.cf` has a cost). */
  locate: () => RequestLocation;
  /** Unix ms when the request arrived; the budget counts from here. */
  startedAt: number;
  /** Whose request it is (the API key's tenant): the forward carries it, signed, for the pools' fair share. */
  tenant?: string;
  /**
   * A warm-up request (`x-edgecascade-warm-up: 1`, as `npm start` sends before it says ready): answered as any
   * other, but its region calls' times are no evidence of the regions (forward/types.ts `warmUp`). Default false.
   */
  warmUp?: boolean;
  /**
   * This request's budget in ms, end to end at the client (the client's `x-edgecascade-budget-ms`,
   * regions/budget.ts); the regions get it less the client's round trip (regions/client-reserve.ts). Default SLO_BUDGET_MS.
   */
  budgetMs?: number;
  /** The request's trace (edge/observe/): the forward carries it to the regions as W3C Trace Context. */
  trace?: EdgeTrace;
}

/** What the tiers did, for Server-Timing and the request's data point (edge/analytics/). */
export interface ServeTrace {
  cache: { tier: CacheTier | "bypass"; ms: number };
  /** Whether the edge model ran (its time is not measurable inside a Worker; see docs/edge.md). */
  edge: boolean;
  regional?: { region: string; ms: number; hedged: boolean };
  /**
   * What the regions' deadline kept back of the budget for the client's round trip, when a region was wanted and
   * the client's round trip is known; `capped`: the round trip was longer than RTT_RESERVE_MAX_SHARE allows.
   */
  reserve?: { ms: number; capped: boolean };
  /** The edge variant's lowest top probability over the rows, when it ran: what the cascade decided on. */
  edgeTop?: number;
  /** The first region tried when none answered (a degraded answer's). */
  tried?: string;
}

export interface Served {
  /** `[batch, classes]`. */
  probs: ArrayLike<number>;
  batch: number;
  version: string;
  servedBy: ServedBy;
  degraded?: DegradedReason;
  trace: ServeTrace;
  /**
   * The answer's `predictions` as JSON text when serving made it already: a hit of the isolate's cache tier, or an
   * answer just stored in the cache (which keeps this text with it); undefined otherwise.
   */
  predictionsJson?: string;
  /**
   * An edge answer the cascade would have given itself: every row cleared the threshold. False for rows a client
   * made the edge answer (`cascade: "edge"`) that would have gone to a region: the live audit leaves those out,
   * since the import's agreement it is compared with is over the rows the cascade gives the edge.
   */
  chosen?: boolean;
  /** The shared-cache write and warm probes, for `waitUntil`. */
  pending?: Promise<void>;
  /**
   * A cold isolate's edge variant, to load once the answer has gone (`settleServed` runs it in `waitUntil`):
   * creating a session is CPU on the isolate's one thread, which would hold the answer back if it ran first.
   */
  warm?: EdgeVariant;
}

/** The lowest of the rows' top probabilities. */
function lowestTop(probs: ArrayLike<number>, batch: number, classes: number): number {
  let lowest = 1;
  for (let r = 0; r < batch; r++) lowest = Math.min(lowest, topClass(probs, r, classes).confidence);
  return lowest;
}

/** A `/v1/classify` body of `rows` for a region (the forward's, and an audit's). */
export function rowsJson(model: string, version: string | undefined, rows: InputRows): string {
  const inputs: number[][] = [];
  for (let r = 0; r < rows.batch; r++)
    inputs.push(Array.from(rows.data.subarray(r * rows.width, (r + 1) * rows.width)));
  return JSON.stringify(version === undefined ? { model, inputs } : { model, version, inputs });
}

/**
 * Warm probes, from the request's place, of the regions whose estimate kept this request from them (skipped as
 * too far, or put behind the others for a `cascade: "regional"` request) or proved wrong (cut off by the
 * deadline), joined to the cache write for `waitUntil`: that is how a "too far" corrects itself, whatever the
 * cascade mode of the requests that need the region.
 */
function withWarmProbes(
  rt: EdgeRuntime,
  served: ServedModel,
  location: RequestLocation,
  errors: readonly RegionError[],
  passedOver: readonly string[],
  pending: Promise<void> | undefined,
): Promise<void> | undefined {
  const misjudged = errors.filter((e) => e.code === "too_far" || e.code === "timeout").map((e) => e.region);
  const regions = [...new Set([...misjudged, ...passedOver])];
  const probes = regions.length > 0 ? rt.warmProbes(regions, served, Date.now(), location) : undefined;
  if (!probes) return pending;
  return pending ? Promise.all([pending, probes]).then(() => undefined) : probes;
}

/**
 * Answer a request for `served` through the tiers: cache (auto mode only), its edge variant, the cascade
 * decision, the regions, and degradation to the edge variant's answer when no region answers. A model
 * without an edge variant goes from the cache straight to the regions. Only successful, non-degraded
 * answers of `auto` requests are cached; forced modes neither read nor fill the cache. A pinned version
 * goes to the regions with the rows, and only an answer of that version is taken. Regions the reach estimate
 * puts out of the budget's reach are skipped, except for `cascade: "regional"` (the client asked for the full
 * model), a model without an edge variant (nothing else could answer) and one whose edge variant has no session
 * in this isolate (nothing else could answer without creating it on the request path): those go to the nearest
 * healthy region whatever the estimate.
 */
export async function serve(rt: EdgeRuntime, served: ServedModel, request: ServeRequest): Promise<Served> {
  const { rows, version: pinned, mode, locate, startedAt } = request;
  const budgetMs = request.budgetMs ?? rt.options.sloBudgetMs;
  const edgeVariant = served.edge;
  const { classes } = served.io;
  if (mode === "edge" && !edgeVariant) {
    throw new BadRequest(`model "${served.name}" has no edge variant; "cascade": "edge" is not available for it`);
  }
  // Both at once on most requests (a memoised report, no canary): awaited only when they are promises.
  const status = rt.latestRegionStatus(startedAt);
  const regionStatus = status instanceof Promise ? await status : status;
  const trace: ServeTrace = { cache: { tier: "bypass", ms: 0 }, edge: false };
  const useCache = mode === "auto";
  // Pinned, the answer is of that version even if the region status read above has just raised the served one. During
  // a canary, the version the regions answer this input with (the same hash the pools route by).
  let edgeVersion = pinned ?? served.servedVersion;
  if (pinned === undefined && useCache) {
    const version = served.versionFor(rows.data);
    edgeVersion = typeof version === "string" ? version : await version;
  }
  let key: AnswerKey | undefined;
  /** Store an answer under `stored` with its predictions' text; the text, for the answer. */
  const store = (stored: AnswerKey, version: string, probs: ArrayLike<number>) => {
    const text = predictionsJson(probs, rows.batch, served.io.labels);
    const pending = rt.cache.put(stored, { version, probs: float32Data(probs), predictionsJson: text }, startedAt);
    return { pending, text };
  };

  if (useCache) {
    const lookupStarted = Date.now();
    key = answerKey(served.name, edgeVersion, rows.data);
    const local = rt.cache.local(key, lookupStarted);
    const { tier, answer } = local ? { tier: "l1" as const, answer: local } : await rt.cache.shared(key, lookupStarted);
    trace.cache = { tier, ms: Date.now() - lookupStarted };
    if (answer) {
      const { probs, version, predictionsJson } = answer;
      return { probs, batch: rows.batch, version, servedBy: "cache", trace, predictionsJson };
    }
  }

  // The edge model runs at most once per request: before the decision (auto, edge) or to degrade (regional).
  let edgeRun: Promise<Float32Array | undefined> | undefined;
  let edgeFailure: string | undefined;
  const runEdge = () => {
    if (!edgeVariant) return Promise.resolve(undefined);
    edgeRun ??= edgeVariant.infer(rows.data, rows.batch).then(
      (probs) => {
        trace.edge = true;
        return probs;
      },
      (err: unknown) => {
        edgeFailure = (err as Error).message;
        rt.edgeModelFailed(served, edgeVariant, edgeFailure);
        if (mode === "edge") throw new NotReady(`edge model not available: ${edgeFailure}`, 1);
        return undefined; // auto: without the edge model's confidence, the region decides
      },
    );
    return edgeRun;
  };

  /** The edge variant's answer when every row clears the threshold (auto, edge modes); undefined otherwise. */
  const confidentAnswer = (edgeProbs: Float32Array): Served | undefined => {
    const confidences = Array.from({ length: rows.batch }, (_, r) => topClass(edgeProbs, r, classes).confidence);
    const threshold = rt.threshold(served)!;
    if (cascadeDecision(confidences, threshold, mode) !== "edge") return undefined;
    const stored = key ? store(key, edgeVersion, edgeProbs) : undefined;
    return {
      probs: edgeProbs,
      batch: rows.batch,
      version: edgeVersion,
      servedBy: "edge",
      trace,
      chosen: mode === "auto" || edgeIsConfident(confidences, threshold),
      pending: stored?.pending,
      predictionsJson: stored?.text,
    };
  };

  // A cold isolate: the edge variant has no session yet. An auto request does not wait for one while a region may
  // answer it: the request is forwarded, whatever the reach estimate and with LOAD_WAIT_MS more for a region that
  // loads the model on demand (the alternative is creating the session on the request path, CPU on the isolate's
  // one thread that every request waits behind), and the session created after the answer (waitUntil) if the
  // isolate's sessions admit it. Should no region answer (none, failures, the deadline), the request waits for
  // the session below and the cascade decides then.
  const cold = mode === "auto" && edgeVariant !== undefined && !edgeVariant.ready;
  const edgeProbs = mode === "regional" || cold ? undefined : await runEdge();
  if (edgeProbs) trace.edgeTop = lowestTop(edgeProbs, rows.batch, classes);
  const atEdge = edgeProbs && confidentAnswer(edgeProbs);
  if (atEdge) return atEdge;

  const health = rt.book.health(
    startedAt,
    Object.fromEntries((regionStatus?.regions ?? []).map((r) => [r.name, r.ready])),
  );
  const location = locate();
  const { rttReserveMaxShare, loadWaitMs } = rt.options;
  const deadline = forwardDeadline(
    startedAt,
    budgetMs,
    location.clientRttMs,
    rttReserveMaxShare,
    cold ? loadWaitMs : 0,
  );
  if (deadline.reserveMs > 0) trace.reserve = { ms: deadline.reserveMs, capped: deadline.capped };
  let forwarded: Forwarded;
  try {
    forwarded = await rt.forward(regionOrder(rt.options.regions, location, health), {
      path: "/v1/classify",
      body: rowsJson(served.name, pinned, rows),
      batch: rows.batch,
      classes,
      version: pinned,
      headers: request.trace ? traceHeaders(request.trace) : {},
      ...(request.tenant === undefined ? {} : { tenant: request.tenant }),
      deadlineAt: deadline.deadlineAt,
      location,
      anyDistance: mode === "regional" || !edgeVariant || cold,
      ...(request.warmUp ? { warmUp: true } : {}),
    });
  } catch (err) {
    if (!(err instanceof NoRegionAnswered)) throw err;
    const pending = withWarmProbes(rt, served, location, err.errors, err.passedOver, undefined);
    if (err.errors[0]) trace.tried = err.errors[0].region;
    if (cold)
      rt.sessions.createsOnRequestPath(edgeVariant, Date.now(), `no region answered (${degradedReason(err.errors)})`);
    const fallback = await runEdge();
    if (!fallback) {
      const why = edgeVariant
        ? `the edge model is not available (${edgeFailure})`
        : `model "${served.name}" has no edge variant`;
      throw new NotReady(`no region answered and ${why}: ${err.message}`, 1);
    }
    trace.edgeTop = lowestTop(fallback, rows.batch, classes);
    // The edge was skipped only because it was cold: a confident row is the edge's answer, not a degraded one.
    const confident = cold ? confidentAnswer(fallback) : undefined;
    if (confident) {
      const both =
        confident.pending && pending ? Promise.all([confident.pending, pending]).then(() => undefined) : undefined;
      return { ...confident, pending: both ?? confident.pending ?? pending };
    }
    return {
      probs: fallback,
      batch: rows.batch,
      version: edgeVersion,
      servedBy: "degraded",
      degraded: degradedReason(err.errors),
      trace,
      pending,
    };
  }

  const { answer, hedged, errors, passedOver } = forwarded;
  served.seeRollout(answer.rollout);
  served.seeVersion(answer.version);
  trace.regional = { region: answer.region, ms: answer.ms, hedged };
  let pending: Promise<void> | undefined;
  let text: string | undefined;
  if (key) {
    // Stored under the version that answered, which a newer region may have raised past the lookup's.
    const stored = answer.version === edgeVersion ? key : answerKey(served.name, answer.version, rows.data);
    ({ pending, text } = store(stored, answer.version, answer.probs));
  }
  pending = withWarmProbes(rt, served, location, errors, passedOver, pending);
  return {
    probs: answer.probs,
    batch: rows.batch,
    version: answer.version,
    servedBy: `regional:${answer.region}`,
    trace,
    pending,
    predictionsJson: text,
    // Created after the answer if the isolate's sessions admit it (room; or asked for more than the session it would
    // evict, within EDGE_SESSION_REPLACEMENTS_PER_SECOND: session-pool.ts).
    warm: cold && rt.sessions.admits(edgeVariant, Date.now()) ? edgeVariant : undefined,
  };
}
