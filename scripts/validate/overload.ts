/**
 * npm run validate:overload: twice the capacity, offered. First a regional pool: its capacity is measured in the
 * same run (closed loop), then open-loop load at half of it, at twice it, and at half again; accepted requests
 * must keep their p99 within the SLO, the rest must be refused with 429 and Retry-After, the pool's peak RSS
 * stays bounded, and it recovers when the load drops. Then the same at the edge through its rate limiter (one
 * client offered twice its limit). Then two tenants at a pool (two-tenants.ts): A within its reservation beside B
 * flooding at three times the pool's capacity. Writes bench/overload.json and bench/overload.md. `--help` lists the
 * flags; the defaults take about 3 minutes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { descendants } from "../../tools/local-stack/processes.ts";
import { closedLoop, openLoop } from "../../tools/probe/load.ts";
import { headerValue, type LoadRequest } from "../../tools/probe/load-response.ts";
import type { LatencyStats } from "../../tools/probe/summary.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import { startEdgeWorker } from "../stack/edge-worker.ts";
import { startRegionalPool } from "../stack/regional-pool.ts";
import { validationModel } from "./model.ts";
import { RssSampler } from "./rss.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";
import { twoTenantMarkdown } from "./two-tenants/report.ts";
import type { TwoTenantReport } from "./two-tenants/scenario.ts";
import { twoTenants } from "./two-tenants.ts";

const FLAGS = {
  model: MODEL_FLAG,
  "capacity-s": {
    type: "number",
    placeholder: "S",
    default: 5,
    min: 1,
    help: "seconds of the closed-loop capacity measurement",
  },
  "phase-s": {
    type: "number",
    placeholder: "S",
    default: 10,
    min: 1,
    help: "seconds of each open-loop phase: half, twice, half",
  },
  connections: {
    type: "number",
    placeholder: "N",
    default: 512,
    min: 1,
    integer: true,
    defaultText: "512: many clients, as many edge isolates",
    help: "connections of the open-loop generator",
  },
  "slo-ms": {
    type: "number",
    placeholder: "MS",
    default: 10,
    min: 1,
    help: "the deadline each request carries and the p99 the accepted ones must keep",
  },
  "edge-limit": {
    type: "number",
    placeholder: "N",
    default: 1000,
    min: 1,
    integer: true,
    help: "the edge's rate limit, requests per 10 s for one client",
  },
  scenarios: {
    type: "list",
    placeholder: "S,...",
    default: ["pool", "edge", "tenants"],
    choices: ["pool", "edge", "tenants"],
    help: "which scenarios run: a pool at twice its capacity, the edge's rate limiter, two tenants at a pool",
  },
  "b-rows": {
    type: "number",
    placeholder: "N",
    default: 8,
    min: 1,
    max: 64,
    integer: true,
    help: "two tenants: rows in each of tenant B's requests",
  },
  "a-share": {
    type: "number",
    placeholder: "X",
    default: 0.05,
    min: 0.001,
    max: 0.4,
    help: "two tenants: A's rate as a share of the pool's capacity (its reservation is twice that)",
  },
  flood: {
    type: "number",
    placeholder: "X",
    default: 3,
    min: 1,
    help: "two tenants: B's offered rows per second as a multiple of the pool's capacity",
  },
  "tenant-rounds": {
    type: "number",
    placeholder: "N",
    default: 3,
    min: 1,
    integer: true,
    help: "two tenants: rounds of A alone and A beside B's flood (each phase --tenant-phase-s)",
  },
  "tenant-phase-s": {
    type: "number",
    placeholder: "S",
    default: 5,
    min: 1,
    help: "two tenants: seconds of each phase of a round",
  },
  pin: {
    type: "string",
    placeholder: "on|off",
    default: "on",
    choices: ["on", "off"],
    help: "two tenants: the pool on one core, the generator on another (taskset; unpinned where absent)",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

export interface PhaseResult {
  phase: string;
  offeredRps: number;
  /** What the generator managed to send per second (it shares the machine). */
  sentRps: number;
  requests: number;
  accepted: number;
  /** 429s, and how many of them carried Retry-After. */
  refused: number;
  refusedWithRetryAfter: number;
  /** Other statuses (504 for requests whose deadline passed in the queue, 5xx) and failed connections (0). */
  other: Record<string, number>;
  acceptedLatency: LatencyStats;
  /** Accepted requests per second of the phase. */
  goodputRps: number;
}

/** Offer `rate` for `durationS` and tally the answers. */
async function phase(
  name: string,
  origin: string,
  rate: number,
  durationS: number,
  connections: number,
  next: (i: number) => LoadRequest,
): Promise<PhaseResult> {
  let refusedWithRetryAfter = 0;
  const { sent, summary } = await openLoop({
    origin,
    rate,
    durationS,
    connections,
    timeoutMs: 30_000,
    next,
    onResponse: (r) => {
      if (r.status === 429 && headerValue(r.headers, "retry-after")) refusedWithRetryAfter++;
    },
  });
  const other = Object.fromEntries(
    Object.entries(summary.statuses).filter(([status]) => status !== "200" && status !== "429"),
  );
  const round = (x: number) => Math.round(x);
  return {
    phase: name,
    offeredRps: round(rate),
    sentRps: round(sent / durationS),
    requests: sent,
    accepted: summary.ok,
    refused: summary.statuses[429] ?? 0,
    refusedWithRetryAfter,
    other,
    acceptedLatency: summary.latency,
    goodputRps: round(summary.ok / Math.max(durationS, summary.durationS)),
  };
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function phaseTable(phases: PhaseResult[], sloMs: number): string[] {
  return [
    `| phase | offered req/s | sent req/s | accepted | accepted req/s | 429 (with Retry-After) | other | accepted p50 / p99 ms | p99 ≤ ${sloMs} ms |`,
    "|---|---|---|---|---|---|---|---|---|",
    ...phases.map(
      (p) =>
        `| ${p.phase} | ${p.offeredRps} | ${p.sentRps} | ${p.accepted} | ${p.goodputRps} | ${p.refused} (${p.refusedWithRetryAfter}) | ${JSON.stringify(p.other)} | ${p.acceptedLatency.p50Ms.toFixed(2)} / ${p.acceptedLatency.p99Ms.toFixed(2)} | ${p.acceptedLatency.p99Ms <= sloMs ? "yes" : "**no**"} |`,
    ),
  ];
}

interface Report {
  info: RunInfo;
  settings: Record<string, unknown>;
  pool?: {
    capacityRps: number;
    capacity: { requests: number; ok: number; durationS: number; statuses: Record<number, number> };
    phases: PhaseResult[];
    peakRssMiB: number;
  };
  edge?: { limitPer10s: number; phases: PhaseResult[]; peakRssMiB: number };
  tenants?: TwoTenantReport;
}

function markdown(r: Report): string {
  const slo = r.settings.sloMs as number;
  const pool = r.pool
    ? poolMarkdown(r.pool, r.settings, slo)
    : ["## A regional pool at twice its capacity", "", "Not run (`--scenarios`)."];
  const edge = r.edge
    ? edgeMarkdown(r.edge, slo)
    : ["## The edge through its rate limiter", "", "Not run (`--scenarios`)."];
  const tenants = r.tenants
    ? twoTenantMarkdown(r.tenants)
    : ["## Two tenants at a pool: one within its reservation, one flooding", "", "Not run (`--scenarios`)."];
  return `${["# Overload", "", runLine(r.info), "", ...pool, "", ...edge, "", ...tenants].join("\n")}\n`;
}

function poolMarkdown(p: NonNullable<Report["pool"]>, settings: Record<string, unknown>, slo: number): string[] {
  const r = { pool: p, settings };
  return [
    "## A regional pool at twice its capacity",
    "",
    `One pool (\`npm run regional\`, one process). Capacity measured first, closed loop with 32 connections:`,
    `**${r.pool.capacityRps} req/s** of single-row \`/v1/classify\` (${JSON.stringify(r.pool.capacity.statuses)}). Then open-loop phases`,
    `at half, twice and half of it, each request carrying \`${DEADLINE_HEADER}: ${slo}\` as the edge's would, over`,
    `${r.settings.connections} connections (many clients). Latency counts from when each request was due. The pool`,
    "refuses at once (429, before reading the body) what it cannot answer within the request's deadline",
    "(admission by deadline, docs/regional.md); a request whose deadline passes while it waits is a 504.",
    "The generator runs on the same cores: at twice the capacity it competes with the pool for them, and the",
    "latency of requests it could not send on time (all connections busy) includes its own backlog.",
    "",
    ...phaseTable(r.pool.phases, slo),
    "",
    `Peak RSS of the pool: **${r.pool.peakRssMiB} MiB**.`,
  ];
}

function edgeMarkdown(e: NonNullable<Report["edge"]>, slo: number): string[] {
  const r = { edge: e };
  return [
    "## The edge through its rate limiter",
    "",
    `The edge Worker with \`RATE_LIMITER\` at ${r.edge.limitPer10s} requests per 10 s for one client, offered twice that, then`,
    "(after one window of rest) half. Miniflare's limiter, like Cloudflare's, counts approximately.",
    "",
    ...phaseTable(r.edge.phases, slo),
    "",
    `Peak RSS of workerd: **${r.edge.peakRssMiB} MiB**.`,
  ];
}

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = validationModel(values.model);
  const { "capacity-s": capacityS, "phase-s": phaseS, connections, "slo-ms": sloMs, "edge-limit": edgeLimit } = values;
  const scenarios = new Set(values.scenarios);
  const out = resolve(ROOT, values.out);
  holdBenchLock();
  const info = runInfo(`npm run validate:overload -- ${process.argv.slice(2).join(" ")}`.trim());

  const body = (i: number) => JSON.stringify({ model: model.name, inputs: model.rows[i % model.rows.length]!.input });
  const bodies = model.rows.map((_, i) => body(i));
  const poolRequest = (i: number): LoadRequest => ({
    path: "/v1/classify",
    headers: { "content-type": "application/json", [DEADLINE_HEADER]: String(sloMs) },
    body: bodies[i % bodies.length],
  });

  let poolReport: Report["pool"];
  if (scenarios.has("pool")) {
    console.error("regional pool: measuring capacity...");
    const pool = await startRegionalPool({ region: "overload" });
    try {
      await closedLoop({ origin: pool.url, connections: 32, durationS: 1, next: poolRequest });
      const { requests, ok, durationS, statuses } = (
        await closedLoop({ origin: pool.url, connections: 32, durationS: capacityS, next: poolRequest })
      ).summary;
      const capacity = { requests, ok, durationS, statuses };
      const capacityRps = Math.round(capacity.ok / capacity.durationS);
      console.error(`  capacity ${capacityRps} req/s; offering half, twice, half...`);
      const rss = new RssSampler([pool.pid, ...descendants(pool.pid)]);
      const phases: PhaseResult[] = [];
      for (const [name, factor] of [
        ["half", 0.5],
        ["twice", 2],
        ["half again", 0.5],
      ] as const) {
        phases.push(await phase(name, pool.url, capacityRps * factor, phaseS, connections, poolRequest));
        const p = phases.at(-1)!;
        console.error(`  ${name}: accepted ${p.goodputRps} req/s, 429 ${p.refused}, p99 ${p.acceptedLatency.p99Ms} ms`);
      }
      poolReport = { capacityRps, capacity, phases, peakRssMiB: mib(rss.stop()) };
    } finally {
      await pool.stop();
    }
  }

  let edgeReport: Report["edge"];
  if (scenarios.has("edge")) {
    console.error(`edge: rate limit ${edgeLimit} per 10 s for one client...`);
    const edge = await startEdgeWorker({
      vars: { REGIONS: "[]", RATE_LIMIT_PERIOD_S: "10" },
      rateLimit: { limit: edgeLimit, period: 10 },
    });
    try {
      // Rows the edge model answers itself (no region here): what is measured is the edge and its limiter.
      const confident = model.rows.filter((r) => Math.max(...r.expected[model.edgeModel]!) >= model.threshold);
      const edgeRequest = (i: number): LoadRequest => ({
        path: "/v1/classify",
        headers: { "content-type": "application/json", "cf-connecting-ip": "203.0.113.7" },
        body: JSON.stringify({
          model: model.name,
          inputs: confident[i % confident.length]!.input,
          parameters: { cascade: "edge" },
        }),
      });
      // Warm: the edge model loads on the first request (from another client, so the limit is not touched).
      const warm = await edge.dispatchFetch(`${edge.url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": "198.51.100.1" },
        body: edgeRequest(0).body,
      });
      if (warm.status !== 200) throw new Error(`edge warm-up answered ${warm.status}`);
      const workerd = descendants(process.pid);
      const rss = new RssSampler(workerd);
      const limitRps = edgeLimit / 10;
      const phases: PhaseResult[] = [];
      for (const [name, factor] of [
        ["twice the limit", 2],
        ["half the limit", 0.5],
      ] as const) {
        // Recovery is judged once the limiter's window (10 s) has passed since the overload ended.
        if (phases.length > 0) await new Promise((r) => setTimeout(r, 10_000));
        phases.push(await phase(name, edge.url, limitRps * factor, Math.max(phaseS, 10), 64, edgeRequest));
        const p = phases.at(-1)!;
        console.error(`  ${name}: accepted ${p.goodputRps} req/s, 429 ${p.refused}, p99 ${p.acceptedLatency.p99Ms} ms`);
      }
      edgeReport = { limitPer10s: edgeLimit, phases, peakRssMiB: mib(rss.stop()) };
    } finally {
      await edge.dispose();
    }
  }

  const tenants = scenarios.has("tenants")
    ? await twoTenants({
        model,
        capacityS,
        phaseS: values["tenant-phase-s"],
        rounds: values["tenant-rounds"],
        connections,
        sloMs,
        bRows: values["b-rows"],
        aShare: values["a-share"],
        flood: values.flood,
        pin: values.pin === "on",
      })
    : undefined;

  const report: Report = {
    info,
    settings: { model: model.name, capacityS, phaseS, connections, sloMs, edgeLimit, scenarios: [...scenarios] },
    pool: poolReport,
    edge: edgeReport,
    tenants,
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "overload.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, "overload.md"), markdown(report));
  console.error(`wrote ${join(out, "overload.md")}`);
  return 0;
}

runMain(
  defineCommand({
    name: "validate:overload",
    usage: "npm run validate:overload -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
