/**
 * One validate:latency run: a client location's fresh edge Worker under open-loop load through the delay
 * proxies (`runOnce`), a cold isolate's first requests (`--cold`), and the floors' runs against a hello-world
 * Worker and a no-op server.
 */
import { edgeAnswers, type HeldoutRow } from "../../../protocol/heldout.ts";
import { seededRandom } from "../../../protocol/seeded-random.ts";
import { openLoop } from "../../../tools/probe/load.ts";
import { headerValue } from "../../../tools/probe/load-response.ts";
import { type LatencyStats, type ProbeSummary, summarize } from "../../../tools/probe/summary.ts";
import { cpuMs, listeningPid } from "../../benchmarks/process-cpu.ts";
import type { EdgeWorker } from "../../stack/edge-worker.ts";
import { LOCAL_REGIONS } from "../../stack/local-regions.ts";
import { type ClientLocation, oneWayDelayMs } from "../distance.ts";
import { classifyRequest, type EdgeResult, readEdgeAnswer } from "../edge-answer.ts";
import { forwardPieces, type PieceRun } from "../forward-pieces.ts";
import { type GcPauses, requestsInPauses, watchGc } from "../gc-pauses.ts";
import { type ValidationModel, validationModel } from "../model.ts";
import type { RegionName, ValidationStack } from "../stack.ts";
import { regionCallMs, type TailSample, type TailSplit, tailSplit } from "../tail-split.ts";
import { zipfTraffic } from "../traffic.ts";

export interface RunResult {
  location: string;
  delaysMs: Record<string, number>;
  threshold: number;
  summary: ProbeSummary;
  /** Answered without a region: cache, edge model, degraded. */
  edgeShare: number;
  /** Answered by a region. */
  regionalShare: number;
  cacheShare: number;
  /** Labels equal to the rows' true labels, over answered requests. */
  accuracy: number;
  degradedReasons: Record<string, number>;
  /** The load generator's own lateness in sending (its timers): p50, p99 and max, ms; part of every latency. */
  sendLagMs: { p50: number; p99: number; max: number };
  /** Which paths the requests over the budget took, and the forwards' latency split (tail-split.ts). */
  tail: TailSplit;
  /**
   * GC pauses of this process (the load generator; the delay proxies too with `--proxies in-process`), and how
   * many of the requests over the budget were in flight during one.
   */
  generatorGc: GcPauses & { overBudgetInPause: number };
  /** Each proxy's release lateness during the run (DelayProxy.releaseLateness), for proxies that released data. */
  proxyLateMs: Partial<Record<RegionName, LatencyStats>>;
  /** `--decompose`: the forward path's pieces at the same rate, measured just before the run. */
  pieces?: PieceRun[];
  /** `--cold`: the first request of each kind in the fresh isolate, before the load. */
  firstRequests?: FirstRequest[];
  /** Each region as the edge saw it at the end of the run (GET /status/regions). */
  regions: {
    name: string;
    breaker: string;
    expectedAnswerMs: number | "cut-off" | null;
    admitted: number;
    tooFar: number;
    timedOut: number;
    failed: number;
    warmProbes: number;
  }[];
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

interface FirstRequest {
  kind: string;
  servedBy: string;
  latencyMs: number;
  /** workerd's CPU (all threads) from send to the answer, and until 300 ms after it (waitUntil's work too). */
  cpuToAnswerMs: number;
  cpuTotalMs: number;
}

/**
 * `--cold`: a fresh isolate's first requests, one of each kind, sent one after another as soon as it is up:
 * a row the edge variant is sure of (warm, a cache miss the edge answers), one it is unsure of (a forward), and
 * the second model's first row. workerd's CPU from its threads' schedstat (scripts/benchmarks/process-cpu.ts).
 */
async function firstRequests(edge: EdgeWorker, model: ValidationModel, where: string): Promise<FirstRequest[]> {
  const pid = listeningPid(edge.url);
  if (pid === undefined) throw new Error("--cold: cannot tell workerd's pid (ss from iproute2 is needed)");
  const other = validationModel(model.name === "digits" ? "breast-cancer" : "digits");
  const sure = (m: ValidationModel) => m.rows.find((r) => edgeAnswers(r, m.threshold, m.edgeModel))!;
  const unsure = model.rows.find((r) => !edgeAnswers(r, model.threshold, model.edgeModel))!;
  const kinds: [string, ValidationModel, HeldoutRow][] = [
    [`${model.name} row the edge is sure of`, model, sure(model)],
    [`${model.name} row it is unsure of`, model, unsure],
    [`${other.name} row its edge is sure of (second model)`, other, sure(other)],
  ];
  const out: FirstRequest[] = [];
  for (const [kind, m, row] of kinds) {
    const request = classifyRequest(m, row.input, where);
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    const response = await fetch(`${edge.url}${request.path}`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    await response.arrayBuffer();
    const latencyMs = performance.now() - t0;
    const cpu1 = cpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, 300));
    out.push({
      kind,
      servedBy: response.headers.get("x-served-by") ?? `HTTP ${response.status}`,
      latencyMs: round(latencyMs, 2),
      cpuToAnswerMs: round(cpu1 - cpu0, 2),
      cpuTotalMs: round(cpuMs(pid) - cpu0, 2),
    });
  }
  return out;
}

export interface FloorRun {
  what: string;
  when: "before" | "after";
  stats: LatencyStats;
  sendLagMs: { p50: number; p99: number; max: number };
}

/** The same open-loop schedule against a server with nothing behind it: what the machine and client cost alone. */
export async function floorRun(
  what: string,
  when: FloorRun["when"],
  origin: string,
  body: string,
  rate: number,
  durationS: number,
): Promise<FloorRun> {
  const { summary } = await openLoop({
    origin,
    rate,
    durationS,
    next: () => ({ path: "/", headers: { "content-type": "application/json" }, body }),
  });
  return { what, when, stats: summary.latency, sendLagMs: summary.sendLagMs };
}

export async function runOnce(
  stack: ValidationStack,
  model: ValidationModel,
  location: ClientLocation,
  settings: {
    rate: number;
    durationS: number;
    budgetMs: number;
    threshold?: number;
    seed: number;
    traffic: object;
    cold?: boolean;
    /** `--decompose`: seconds per piece of the forward path, measured before the run; undefined: not measured. */
    decomposeS?: number;
    jitterMs: number;
    /** The edge's REACH_QUANTILE; undefined: its default. */
    reachQuantile?: number;
    /** `request.cf.clientTcpRtt` of every request to the location's Worker, ms; 0: none. */
    clientRttMs: number;
  },
): Promise<RunResult> {
  const delaysMs = Object.fromEntries(LOCAL_REGIONS.map((r) => [r.name, oneWayDelayMs(location, r)])) as Record<
    RegionName,
    number
  >;
  await stack.setDelays(delaysMs);
  const unsure = model.rows.find((r) => !edgeAnswers(r, model.threshold, model.edgeModel)) ?? model.rows[0]!;
  const pieces =
    settings.decomposeS === undefined
      ? undefined
      : await forwardPieces(stack, {
          delaysMs,
          jitterMs: settings.jitterMs,
          body: classifyRequest(model, unsure.input).body!,
          rate: settings.rate,
          durationS: settings.decomposeS,
        });
  const vars: Record<string, string> = { SLO_BUDGET_MS: String(settings.budgetMs) };
  if (settings.reachQuantile !== undefined) vars.REACH_QUANTILE = String(settings.reachQuantile);
  if (settings.threshold !== undefined) vars.CASCADE_THRESHOLDS = JSON.stringify({ [model.name]: settings.threshold });
  // The client's round trip reaches the Worker as Cloudflare's does, in request.cf (Miniflare's `cf` per Worker).
  const edge = await stack.startEdge(
    vars,
    settings.clientRttMs > 0 ? { clientTcpRtt: settings.clientRttMs } : undefined,
  );
  try {
    const threshold = settings.threshold ?? model.threshold;
    const where = `${location.latitude},${location.longitude}`;
    let first: FirstRequest[] | undefined;
    if (settings.cold) {
      // A new isolate as it comes: no session, no probe report; its first requests arrive at once.
      first = await firstRequests(edge, model, where);
    } else {
      // What a deployed colo has before traffic: a loaded edge model and the cron's readiness report (KV). No
      // call has reached a region, so routing starts from the distance prior (issue 17: no routing warm-up).
      const warm = await edge.dispatchFetch(`${edge.url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: model.name, inputs: model.rows[0]!.input, parameters: { cascade: "edge" } }),
      });
      if (warm.status !== 200) throw new Error(`edge warm-up answered ${warm.status}: ${await warm.text()}`);
    }
    await edge.scheduled();
    const cron = setInterval(() => void edge.scheduled().catch(() => {}), 60_000);
    const next = zipfTraffic(model.rows, seededRandom(settings.seed), settings.traffic);
    const rows: number[] = [];
    const results: EdgeResult[] = [];
    const samples: TailSample[] = [];
    const startedAt = new Date().toISOString();
    const regionNames = Object.keys(delaysMs) as RegionName[];
    await Promise.all(regionNames.map((name) => stack.proxies[name].releaseLateness()));
    const gc = watchGc();
    // openLoop's own start, to within microseconds: requests' due times count from it.
    const loadStart = performance.now();
    const { sent, summary: load } = await openLoop({
      origin: edge.url,
      rate: settings.rate,
      durationS: settings.durationS,
      next: (i) => {
        const request = next();
        rows[i] = request.row;
        return classifyRequest(model, request.input, where);
      },
      onResponse: (response, _, i) => {
        const result = readEdgeAnswer(response, model.rows[rows[i]!]!, model, threshold);
        results.push(result);
        if (result.path === "error") return;
        const regionMs = regionCallMs(headerValue(response.headers, "server-timing"));
        samples.push({
          path: result.path,
          latencyMs: result.latencyMs,
          ...(regionMs !== undefined ? { regionMs } : {}),
        });
      },
    });
    const { pauses, spans } = gc.stop();
    const overBudget = results
      .filter((r) => r.path === "error" || r.latencyMs > settings.budgetMs)
      .map((r) => ({ startMs: loadStart + r.dueMs, endMs: loadStart + r.dueMs + r.latencyMs }));
    const generatorGc = { ...pauses, overBudgetInPause: requestsInPauses(overBudget, spans) };
    const proxyLateMs: Partial<Record<RegionName, LatencyStats>> = {};
    for (const name of regionNames) {
      const late = await stack.proxies[name].releaseLateness();
      if (late.count > 0) proxyLateMs[name] = late;
    }
    clearInterval(cron);
    // From the location's place: what the isolate expects of each region for its requests (edge/regions/place.ts).
    const statusAnswer = await edge.dispatchFetch(`${edge.url}/status/regions`, {
      headers: { "x-edgecascade-location": where },
    });
    const status = (await statusAnswer.json()) as {
      isolate: {
        regions: {
          name: string;
          breaker: { state: string };
          expectedAnswerMs: number | "cut-off" | null;
          counters: Record<string, number>;
        }[];
      };
    };
    const summary = summarize(results, {
      url: edge.url,
      startedAt,
      durationS: settings.durationS,
      rateRps: settings.rate,
      sent,
      targetP95Ms: settings.budgetMs,
    });
    const answered = results.filter((r) => r.path !== "error");
    const count = (f: (r: EdgeResult) => boolean) => answered.filter(f).length;
    const degradedReasons: Record<string, number> = {};
    for (const r of answered) if (r.degraded) degradedReasons[r.degraded] = (degradedReasons[r.degraded] ?? 0) + 1;
    return {
      location: location.name,
      delaysMs,
      threshold,
      summary,
      edgeShare: round(count((r) => r.path !== "regional") / Math.max(1, answered.length)),
      regionalShare: round(count((r) => r.path === "regional") / Math.max(1, answered.length)),
      cacheShare: round(count((r) => r.path === "cache") / Math.max(1, answered.length)),
      accuracy: round(count((r) => r.accurate === true) / Math.max(1, answered.length)),
      degradedReasons,
      sendLagMs: load.sendLagMs,
      tail: tailSplit(samples, settings.budgetMs),
      generatorGc,
      proxyLateMs,
      ...(pieces ? { pieces } : {}),
      ...(first ? { firstRequests: first } : {}),
      regions: status.isolate.regions.map((r) => ({
        name: r.name,
        breaker: r.breaker.state,
        expectedAnswerMs: r.expectedAnswerMs,
        admitted: r.counters.admitted ?? 0,
        tooFar: r.counters.tooFar ?? 0,
        timedOut: r.counters.timedOut ?? 0,
        failed: r.counters.failed ?? 0,
        warmProbes: r.counters.warmProbes ?? 0,
      })),
    };
  } finally {
    await edge.dispose();
  }
}
