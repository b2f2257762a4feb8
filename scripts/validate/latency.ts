/**
 * npm run validate:latency: the global p95 with real network distance. The local stack (pools us, eu, ap and
 * the edge Worker in workerd) with each region behind a delay proxy whose one-way delay is the distance from
 * the simulated client location (scripts/validate/distance.ts). For each location a fresh edge Worker (a new
 * isolate, as in another colo) that knows every region, as the one anycast Worker does, takes open-loop load of
 * Zipf-popular held-out rows (cache hits, rows the edge model is sure of and rows it is not) from that location,
 * with no routing warm-up: no call reaches a region before the run, so the isolate starts from the distance
 * prior alone and learns the rest from its own calls and warm probes. Then the cascade threshold is varied at
 * one location for the trade-off. Writes bench/latency.json, bench/latency.md and bench/latency-tradeoff.svg.
 * `--help` lists the flags; the defaults take about 3 minutes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { FLOOR_MS } from "../../edge/regions/prior.ts";
import { edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { startNoopServer } from "../../tools/probe/floor.ts";
import { openLoop } from "../../tools/probe/load.ts";
import { headerValue } from "../../tools/probe/load-response.ts";
import { seededRandom } from "../../tools/probe/mix.ts";
import { type LatencyStats, type ProbeSummary, summarize } from "../../tools/probe/summary.ts";
import { startHelloWorker } from "../benchmarks/hello.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { cpuMs, listeningPid } from "../benchmarks/process-cpu.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import type { EdgeWorker } from "../stack/edge-worker.ts";
import { LOCAL_REGIONS } from "../stack/local-regions.ts";
import { tradeoffSvg } from "./chart.ts";
import { CLIENT_LOCATIONS, type ClientLocation, oneWayDelayMs } from "./distance.ts";
import { classifyRequest, type EdgeResult, readEdgeAnswer } from "./edge-answer.ts";
import { busyCores, forwardPieces, type PieceRun } from "./forward-pieces.ts";
import { type GcPauses, requestsInPauses, watchGc } from "./gc-pauses.ts";
import { type ValidationModel, validationModel } from "./model.ts";
import type { ProxyPlacement } from "./proxy-host.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";
import { type RegionName, startValidationStack, stopOnSignals, type ValidationStack } from "./stack.ts";
import { regionCallMs, type TailSample, type TailSplit, tailSplit } from "./tail-split.ts";
import { cascadeOutcome } from "./tradeoff.ts";
import { zipfTraffic } from "./traffic.ts";

const LOCATION_NAMES = CLIENT_LOCATIONS.map((l) => l.name);

const FLAGS = {
  model: MODEL_FLAG,
  rate: { type: "number", placeholder: "R", default: 100, min: 1, help: "requests per second per run, open loop" },
  duration: { type: "number", placeholder: "S", default: 20, min: 1, help: "seconds per client location" },
  locations: {
    type: "list",
    placeholder: "LIST",
    choices: LOCATION_NAMES,
    default: LOCATION_NAMES,
    defaultText: "all",
    help: LOCATION_NAMES.join(","),
  },
  thresholds: {
    type: "list",
    placeholder: "LIST",
    default: ["0.3", "0.5", "calibrated", "0.8", "0.9", "0.95", "0.99"],
    help: 'cascade thresholds for the trade-off; "calibrated" is the model\'s ("none" skips the trade-off)',
  },
  "tradeoff-location": {
    type: "string",
    placeholder: "L",
    choices: LOCATION_NAMES,
    default: "frankfurt",
    help:
      "where the trade-off runs are sent from (frankfurt: a region is in reach of the budget; from\n" +
      "new-york none is, and every threshold forwards nothing)",
  },
  "tradeoff-duration": { type: "number", placeholder: "S", default: 10, min: 1, help: "seconds per threshold" },
  "budget-ms": {
    type: "number",
    placeholder: "MS",
    default: 10,
    min: 1,
    help: "the edge's SLO_BUDGET_MS and the p95 target",
  },
  "client-rtt-ms": {
    type: "number",
    placeholder: "MS",
    default: 2 * FLOOR_MS,
    min: 0,
    help:
      "the client's round trip the edge is told, as Cloudflare's request.cf.clientTcpRtt (0: none,\n" +
      "the budget counts at the edge); default: a client next to its colo by the distance model\n" +
      "(its 1 ms each way at 0 km)",
  },
  "jitter-ms": {
    type: "number",
    placeholder: "MS",
    default: 0.5,
    help: "± jitter of every one-way delay (0: the simulated network without jitter)",
  },
  "reach-quantile": {
    type: "number",
    placeholder: "Q",
    max: 1,
    defaultText: "the edge's, 0.9",
    help: "the edge's REACH_QUANTILE",
  },
  distinct: {
    type: "number",
    placeholder: "N",
    default: 100_000,
    min: 1,
    integer: true,
    defaultText: "100000",
    help: "distinct inputs in the Zipf population",
  },
  "zipf-s": { type: "number", placeholder: "S", default: 1, help: "Zipf exponent" },
  seed: { type: "number", placeholder: "N", default: 1, integer: true, help: "traffic seed" },
  cold: {
    type: "boolean",
    help:
      "no warm-up: each location's fresh Worker first takes one request of each kind (a row\n" +
      "the edge is sure of, one it is unsure of, the second model's), one after another, each\n" +
      "reported with latency and workerd CPU beside the run's warm ones (docs/edge.md)",
  },
  floors: {
    type: "string",
    placeholder: "BOOL",
    choices: ["true", "false"],
    default: "true",
    help:
      "also measure, in the same run, the same rate against a hello-world Worker and a no-op\n" +
      "Node server, before and after the locations",
  },
  decompose: {
    type: "boolean",
    help:
      "before each location, the forward path piece by piece at the same rate: its nearest\n" +
      "pool answering directly, the same pool through its delay proxy, and a no-op server\n" +
      "directly and through a delay proxy of the same delay and jitter (the proxy alone)",
  },
  "decompose-duration": {
    type: "number",
    placeholder: "S",
    default: 5,
    min: 1,
    max: 25,
    help: "seconds per piece of --decompose (a piece's signature holds 30 s)",
  },
  proxies: {
    type: "string",
    placeholder: "WHERE",
    choices: ["apart", "in-process"],
    default: "apart",
    help:
      "where the delay proxies run: apart (their own process, so that the load generator's work\n" +
      "and GC do not hold back the distance they simulate) or in-process (this one, as before)",
  },
  "busy-cores": {
    type: "number",
    placeholder: "N",
    default: 0,
    max: 8,
    integer: true,
    help: "keep N other processes spinning on the CPU throughout (the machine with busy cores)",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

interface RunResult {
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

interface FloorRun {
  what: string;
  when: "before" | "after";
  stats: LatencyStats;
  sendLagMs: { p50: number; p99: number; max: number };
}

/** The same open-loop schedule against a server with nothing behind it: what the machine and client cost alone. */
async function floorRun(
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

async function runOnce(
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

const ms = (v: number | undefined) => (v === undefined ? "–" : v.toFixed(2));
const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

function markdown(report: {
  info: RunInfo;
  settings: Record<string, unknown> & { proxies: string };
  locations: RunResult[];
  tradeoff: (RunResult & { fixture: ReturnType<typeof cascadeOutcome> })[];
  calibrated: number;
  budgetMs: number;
  floors: FloorRun[];
}): string {
  const { locations, tradeoff, budgetMs } = report;
  const lines = [
    "# Global p95 with network distance",
    "",
    runLine(report.info),
    "",
    "The local stack with each region behind a user-space delay proxy (`scripts/validate/delay-proxy.ts`): the",
    "one-way delay from the client's location to each region is `1 ms + great-circle km / 150` (light in fibre",
    "with real routes' detours), applied to every byte each way. A fresh edge Worker per location (a new isolate,",
    "as in another colo) that knows every region, as the one anycast Worker does; its edge model loaded (not with",
    "`--cold`) and the cron's readiness report in KV, and no routing warm-up: no call has reached a region, so the",
    "isolate starts from the distance prior (edge/regions/prior.ts, the same distance model as the proxies) and learns the rest from its",
    "own calls and warm probes. Then open-loop load of Zipf-popular held-out rows from that location.",
    "The clients reach their Worker over loopback; each Worker is told their round trip as Cloudflare tells it,",
    "`request.cf.clientTcpRtt` (`clientRttMs` below), and its regions' deadline is the budget less that round trip",
    "(docs/edge.md, *Deadline*), so that an answer cut off there still reaches the client within the budget.",
    `Latency counts from when each request was due; failures count as never answered. Settings: ${JSON.stringify(report.settings)}.`,
    "",
    "Everything (load generator, proxies, three pools, workerd) shares this machine's cores, so the tails are",
    "this machine's as much as the design's; see bench/README.md. The proxies release data on a precise timer",
    `(precise-timer.ts) and run ${report.settings.proxies === "apart" ? "in their own process, apart from the load generator" : "in the load generator's process (`--proxies in-process`)"}.`,
    "",
    "## Per client location",
    "",
    `| location | one-way ms (us / eu / ap) | requests | regional share | p95 ms | p99 ms | edge share | cache | p50 ms | p95 ≤ ${budgetMs} ms | errors | label mismatches | measured accuracy |`,
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...locations.map(
      (r) =>
        `| ${r.location} | ${r.delaysMs.us} / ${r.delaysMs.eu} / ${r.delaysMs.ap} | ${r.summary.sent} | ${pct(r.regionalShare)} | ${ms(r.summary.overall.p95Ms)} | ${ms(r.summary.overall.p99Ms)} | ${pct(r.edgeShare)} | ${pct(r.cacheShare)} | ${ms(r.summary.overall.p50Ms)} | ${r.summary.target.holds ? "**holds**" : "missed"} (${r.summary.target.measuredP95Ms ?? "inf"}) | ${r.summary.errors} | ${r.summary.mismatches} | ${pct(r.accuracy)} |`,
    ),
    "",
    "The load generator's own lateness in sending (its timers on this shared machine), part of every latency above:",
    "",
    "| location | send lag p50 ms | p99 ms | max ms |",
    "|---|---|---|---|",
    ...locations.map((r) => `| ${r.location} | ${r.sendLagMs.p50} | ${r.sendLagMs.p99} | ${r.sendLagMs.max} |`),
    "",
    ...(report.floors.length > 0
      ? [
          "## Floors in the same run",
          "",
          "The same rate and duration against servers with nothing behind them, before and after the locations: what",
          "this machine, loopback and the client cost alone. The edge's tail above this is the edge's; the rest is the",
          "machine's.",
          "",
          "| floor | when | p50 ms | p95 ms | p99 ms | max ms | send lag p99 ms |",
          "|---|---|---|---|---|---|---|",
          ...report.floors.map(
            (f) =>
              `| ${f.what} | ${f.when} | ${ms(f.stats.p50Ms)} | ${ms(f.stats.p95Ms)} | ${ms(f.stats.p99Ms)} | ${ms(f.stats.maxMs)} | ${f.sendLagMs.p99} |`,
          ),
          "",
        ]
      : []),
    ...(locations.some((r) => r.firstRequests)
      ? [
          "## First requests of a fresh isolate (`--cold`)",
          "",
          "Each location's fresh Worker took these, one after another, as soon as it was up (no warm-up, no probe",
          "report); workerd's CPU from its threads' schedstat, to the answer and until 300 ms after it (the session",
          "created in waitUntil). The run's warm figures per path are in the next table.",
          "",
          "| location | first request | served by | latency ms | CPU to answer ms | CPU incl. waitUntil ms |",
          "|---|---|---|---|---|---|",
          ...locations.flatMap((r) =>
            (r.firstRequests ?? []).map(
              (f) =>
                `| ${r.location} | ${f.kind} | ${f.servedBy} | ${f.latencyMs} | ${f.cpuToAnswerMs} | ${f.cpuTotalMs} |`,
            ),
          ),
          "",
        ]
      : []),
    "## Per path",
    "",
    "| location | path | count | p50 ms | p95 ms | p99 ms | max ms |",
    "|---|---|---|---|---|---|---|",
    ...locations.flatMap((r) =>
      Object.entries(r.summary.paths).map(
        ([path, s]) =>
          `| ${r.location} | ${path}${
            path === "regional"
              ? ` (${Object.entries(r.summary.regions)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(", ")})`
              : ""
          }${
            path === "degraded"
              ? ` (${Object.entries(r.degradedReasons)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(", ")})`
              : ""
          } | ${s.count} | ${ms(s.p50Ms)} | ${ms(s.p95Ms)} | ${ms(s.p99Ms)} | ${ms(s.maxMs)} |`,
      ),
    ),
    "",
    "## What sets the p99",
    "",
    `Requests slower than the ${budgetMs} ms budget, by the path that answered them (at 1% or more of a location's`,
    "requests they set its p99); forwards split into the region call as the edge timed it (Server-Timing, whole",
    "ms: workerd's clock moves on I/O) and the rest (the client's hop to the edge and back, the edge's own work,",
    "the send lag); the load generator's GC pauses during the run (the delay proxies' too with `--proxies in-process`);",
    "and how late each proxy released data against its due time (per release, both directions), the part of a",
    "forward's region call that is the simulation's, not the distance's.",
    "",
    `| location | p99 ms | over ${budgetMs} ms: cache / edge / regional / degraded | region call p50 / p99 ms | rest of a forward p50 / p99 ms | generator GC: pauses, longest, total ms; over ${budgetMs} ms during one | proxy lateness p50 / p99 / max ms (releases) |`,
    "|---|---|---|---|---|---|---|",
    ...locations.map((r) => {
      const o = r.tail.overByPath;
      const f = r.tail.forwards;
      const split = f
        ? `${ms(f.regionCall.p50Ms)} / ${ms(f.regionCall.p99Ms)} | ${ms(f.rest.p50Ms)} / ${ms(f.rest.p99Ms)}`
        : "– | –";
      const g = r.generatorGc;
      const late =
        Object.entries(r.proxyLateMs)
          .map(([name, l]) => `${name}: ${ms(l.p50Ms)} / ${ms(l.p99Ms)} / ${ms(l.maxMs)} (${l.count})`)
          .join("; ") || "–";
      return `| ${r.location} | ${ms(r.summary.overall.p99Ms)} | ${r.tail.over} of ${r.summary.sent}: ${o.cache ?? 0} / ${o.edge ?? 0} / ${o.regional ?? 0} / ${o.degraded ?? 0} | ${split} | ${g.count} (${g.major} full), ${g.maxMs}, ${g.totalMs}; ${g.overBudgetInPause} | ${late} |`;
    }),
    "",
    ...(locations.some((r) => r.pieces)
      ? [
          "## The forward path piece by piece (`--decompose`)",
          "",
          "Just before each location's run, at the same rate: its nearest region's pool answering a signed classify",
          "call directly, then through its delay proxy, and a no-op server directly and through a delay proxy of the",
          "same delay and jitter (the proxy alone). `above 2 × delay`: latency minus the delay the proxy is meant to",
          "add both ways, the part of a forward that is neither distance nor the edge; `proxy lateness`: how late the",
          "proxy released data against its due time, per release.",
          "",
          "| location | region | piece | one-way ms | p50 ms | p95 ms | p99 ms | above 2 × delay p50 / p99 ms | send lag p99 ms | proxy lateness p50 / p99 ms |",
          "|---|---|---|---|---|---|---|---|---|---|",
          ...locations.flatMap((r) =>
            (r.pieces ?? []).map(
              (q) =>
                `| ${r.location} | ${q.region} | ${q.what} | ${q.delayMs} | ${ms(q.stats.p50Ms)} | ${ms(q.stats.p95Ms)} | ${ms(q.stats.p99Ms)} | ${ms(q.overDelay.p50Ms)} / ${ms(q.overDelay.p99Ms)} | ${q.sendLagP99Ms} | ${q.proxyLateMs ? `${ms(q.proxyLateMs.p50Ms)} / ${ms(q.proxyLateMs.p99Ms)}` : "–"} |`,
            ),
          ),
          "",
        ]
      : []),
    "## Regions as the edge saw them at the end of each run",
    "",
    "Budget-aware routing (docs/edge.md): a region expected to answer later than what is left of the budget is",
    "not tried (`too far`), and being far is never charged to its breaker. The expected answer time is the",
    "isolate's own evidence (its calls and warm probes; `cut-off`: calls cut off by the deadline); calls sent",
    "include the warm probes' classify calls.",
    "",
    "| location | region | breaker | expected answer ms | calls sent | skipped as too far | timed out | failed | warm probes |",
    "|---|---|---|---|---|---|---|---|---|",
    ...locations.flatMap((r) =>
      r.regions.map(
        (g) =>
          `| ${r.location} | ${g.name} | ${g.breaker} | ${g.expectedAnswerMs ?? "unknown"} | ${g.admitted} | ${g.tooFar} | ${g.timedOut} | ${g.failed} | ${g.warmProbes} |`,
      ),
    ),
  ];
  if (tradeoff.length > 0) {
    lines.push(
      "",
      `## Trade-off: cascade threshold (from ${tradeoff[0]!.location})`,
      "",
      `Each threshold set with \`CASCADE_THRESHOLDS\`; the calibrated one is ${report.calibrated}. Accuracy and edge`,
      "share on the held-out rows are exact (both models' outputs on every row); the measured columns come from",
      "the run (Zipf traffic, so popular rows weigh more).",
      "",
      "![p95 and accuracy by threshold](latency-tradeoff.svg)",
      "",
      "| threshold | held-out accuracy | held-out edge share | measured edge share | measured accuracy | p50 ms | p95 ms | p99 ms | p95 target |",
      "|---|---|---|---|---|---|---|---|---|",
      ...tradeoff.map(
        (r) =>
          `| ${r.threshold}${r.threshold === report.calibrated ? " (calibrated)" : ""} | ${pct(r.fixture.accuracy)} | ${pct(r.fixture.edgeShare)} | ${pct(r.edgeShare)} | ${pct(r.accuracy)} | ${ms(r.summary.overall.p50Ms)} | ${ms(r.summary.overall.p95Ms)} | ${ms(r.summary.overall.p99Ms)} | ${r.summary.target.holds ? "holds" : "missed"} |`,
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = validationModel(values.model);
  const locations = values.locations.map((n) => CLIENT_LOCATIONS.find((l) => l.name === n)!);
  const thresholdItems = values.thresholds;
  const thresholds = thresholdItems.includes("none")
    ? []
    : thresholdItems.map((t) => {
        if (t === "calibrated") return model.threshold;
        const threshold = t.trim() ? Number(t) : Number.NaN;
        if (!(threshold >= 0 && threshold <= 1)) {
          throw new UsageError(
            `--thresholds: ${JSON.stringify(t)} is not a number from 0 to 1, "calibrated" or "none"`,
          );
        }
        return threshold;
      });
  const {
    "tradeoff-location": tradeoffAt,
    rate,
    duration: durationS,
    "tradeoff-duration": tradeoffS,
    "budget-ms": budgetMs,
    "jitter-ms": jitterMs,
    "client-rtt-ms": clientRttMs,
    seed,
    cold,
    "reach-quantile": reachQuantile,
    "busy-cores": busy,
    proxies,
  } = values;
  if (values["decompose-duration"] !== FLAGS["decompose-duration"].default && !values.decompose) {
    throw new UsageError("--decompose-duration is only for --decompose");
  }
  const decomposeS = values.decompose ? values["decompose-duration"] : undefined;
  const traffic = { distinct: values.distinct, zipfS: values["zipf-s"] };
  const floors = values.floors === "true";
  const out = resolve(ROOT, values.out);
  holdBenchLock();

  const info = runInfo(`npm run validate:latency -- ${process.argv.slice(2).join(" ")}`.trim());
  console.error(`starting pools us, eu, ap behind delay proxies...`);
  const stack = await startValidationStack({ jitterMs, proxies: proxies as ProxyPlacement });
  stopOnSignals(stack);
  const spinning = busyCores(busy);
  try {
    const settings = {
      rate,
      durationS,
      budgetMs,
      seed,
      traffic,
      cold,
      jitterMs,
      decomposeS,
      reachQuantile,
      clientRttMs,
    };
    const floorRuns: FloorRun[] = [];
    /** hello-world Worker and no-op Node server at the same rate: the machine's and the client's own tail. */
    const measureFloors = async (when: FloorRun["when"]) => {
      if (!floors) return;
      const body = classifyRequest(model, model.rows[0]!.input).body!;
      const hello = await startHelloWorker({ cacheApi: false });
      const noop = await startNoopServer(body);
      try {
        for (const [what, url] of [
          ["hello-world Worker (workerd, Miniflare)", hello.url],
          ["no-op Node server (its own thread)", noop.url],
        ] as const) {
          console.error(`floor (${when}): ${what}, ${durationS} s at ${rate} req/s...`);
          const run = await floorRun(what, when, url, body, rate, durationS);
          console.error(`  p50 ${run.stats.p50Ms} ms, p95 ${run.stats.p95Ms} ms, p99 ${run.stats.p99Ms} ms`);
          floorRuns.push(run);
        }
      } finally {
        await Promise.all([hello.dispose(), noop.close()]);
      }
    };
    await measureFloors("before");
    const perLocation: RunResult[] = [];
    for (const location of locations) {
      console.error(`${location.name}: ${durationS} s at ${rate} req/s...`);
      const result = await runOnce(stack, model, location, settings);
      const s = result.summary;
      console.error(
        `  regional share ${pct(result.regionalShare)}, p50 ${s.overall.p50Ms} ms, p95 ${s.overall.p95Ms} ms, p99 ${s.overall.p99Ms} ms, edge share ${pct(result.edgeShare)}, target ${s.target.holds ? "holds" : "MISSED"}, errors ${s.errors}`,
      );
      perLocation.push(result);
    }
    await measureFloors("after");
    const tradeoff: (RunResult & { fixture: ReturnType<typeof cascadeOutcome> })[] = [];
    const from = CLIENT_LOCATIONS.find((l) => l.name === tradeoffAt)!;
    for (const threshold of thresholds) {
      console.error(`trade-off: threshold ${threshold} from ${from.name}, ${tradeoffS} s...`);
      const result = await runOnce(stack, model, from, {
        ...settings,
        durationS: tradeoffS,
        threshold,
        cold: false,
        decomposeS: undefined,
      });
      tradeoff.push({ ...result, fixture: cascadeOutcome(model.rows, threshold, model.name, model.edgeModel) });
      console.error(`  p95 ${result.summary.overall.p95Ms} ms, edge share ${pct(result.edgeShare)}`);
    }
    const report = {
      info,
      settings: {
        model: model.name,
        rate,
        durationS,
        tradeoffS,
        budgetMs,
        clientRttMs,
        jitterMs,
        traffic,
        seed,
        cold,
        proxies,
        ...(decomposeS !== undefined ? { decomposeS } : {}),
        ...(reachQuantile !== undefined ? { reachQuantile } : {}),
        ...(busy > 0 ? { busyCores: busy } : {}),
      },
      floors: floorRuns,
      calibrated: model.threshold,
      budgetMs,
      locations: perLocation,
      tradeoff,
    };
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "latency.json"), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, "latency.md"), markdown(report));
    if (tradeoff.length > 0) {
      const points = tradeoff.map((r) => ({
        threshold: r.threshold,
        p95Ms: r.summary.overall.p95Ms,
        accuracy: r.fixture.accuracy,
        edgeShare: r.edgeShare,
      }));
      writeFileSync(
        join(out, "latency-tradeoff.svg"),
        `${tradeoffSvg(points, { targetMs: budgetMs, calibrated: model.threshold })}\n`,
      );
    }
    console.error(`wrote ${join(out, "latency.md")}`);
    return perLocation.every((r) => r.summary.errors === 0) ? 0 : 1;
  } finally {
    spinning.stop();
    await stack.stop();
  }
}

runMain(
  defineCommand({
    name: "validate:latency",
    usage: "npm run validate:latency -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
