import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { shedBackoffMs } from "../../edge/regions/shed-backoff-policy.ts";
import { DEADLINE_HEADER, SIGNATURE_HEADER, TENANT_HEADER, TIMESTAMP_HEADER } from "../../protocol/headers.ts";
import { argmax, edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { signedMessage } from "../../protocol/signing.ts";
import { closedLoop, LoadClient, openLoop } from "../../tools/probe/load.ts";
import { headerValue, type LoadRequest, type LoadResponse } from "../../tools/probe/load-response.ts";
import { LoadTally } from "../../tools/probe/load-tally.ts";
import { dueAt } from "../../tools/probe/schedule.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "../benchmarks/core-pinning.ts";
import { startEdgeWorker } from "../stack/edge-worker.ts";
import { descendants } from "../stack/processes.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";
import type { ValidationModel } from "./model.ts";
import { type TenantTally, type TwoTenantVerdict, twoTenantVerdict } from "./tenant-verdict.ts";

/**
 * validate:overload's two-tenant scenario: one pool with tenant A guaranteed (a reservation twice what A sends)
 * and tenant B best-effort. A sends single unsure rows steadily; B floods the pool with batches of unsure rows at
 * three times the pool's capacity. Every request is the edge's forward (signed, with its tenant and deadline), sent
 * straight to the pool: the flood stands for the forwards of many edge isolates, which one Worker on this machine
 * could not produce. A's p99 and success rate are measured beside a phase with A alone; B must get 429s; every
 * answer is checked against the request it answers. Then, while B floods, one Worker in front of the pool sends
 * each tenant's unsure rows: B's come back degraded (`tenant-shed`), A's from the region.
 */

export interface TwoTenantOptions {
  model: ValidationModel;
  capacityS: number;
  phaseS: number;
  /** Connections B's flood is sent over (A: 64). */
  connections: number;
  sloMs: number;
  /** Rows per B request. */
  bRows: number;
  /** A's rate, as a share of the pool's capacity in rows per second. */
  aShare: number;
  /** B's offered rows per second, as a multiple of the pool's capacity. */
  flood: number;
  /** Pool on one core, the generator on another (taskset). */
  pin: boolean;
  /** Rounds of A alone and A beside B's flood. */
  rounds: number;
}

export interface TenantPhase {
  round: number;
  phase: string;
  a: TenantTally & { offeredRps: number };
  b?: TenantTally & { offeredRps: number; offeredRowsPerS: number };
}

/** The scenario on one pool. */
export interface TwoTenantRun {
  kind: "device" | "cpu";
  pinned: string;
  capacity: { rowsPerS: number; reqPerS: number; statuses: Record<string, number> };
  reservationRowsPerS: number;
  phases: TenantPhase[];
  /** Through one edge Worker during the flood (the device pool only). */
  edge?: { a: Record<string, number>; b: Record<string, number>; bDegradedReasons: Record<string, number> };
  poolCounts: Record<string, Record<string, number>>;
  verdict: TwoTenantVerdict;
}

export interface TwoTenantReport {
  settings: Omit<TwoTenantOptions, "model"> & { model: string };
  /** The device-bound pool (the verdict), then the CPU-bound one. */
  runs: TwoTenantRun[];
}

const SECRET = "validate-overload-tenants";
const run = promisify(execFile);

/** What tenant-stream.ts is told: where and how fast to send tenant A's single unsure rows. */
export interface StreamArgs {
  origin: string;
  rate: number;
  durationS: number;
  model: string;
  sloMs: number;
}
const round = (x: number) => Math.round(x);

/** A forward as the edge sends it: `rows` for `tenant`, signed (protocol/signing.ts), with the deadline. */
function forward(tenant: string, id: string, model: string, rows: readonly HeldoutRow[], deadlineMs: number) {
  const body = JSON.stringify({ model, inputs: rows.map((r) => r.input), id });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", SECRET)
    .update(signedMessage({ method: "POST", path: "/v1/classify", body, timestamp, tenant }))
    .digest("hex");
  return {
    path: "/v1/classify",
    headers: {
      "content-type": "application/json",
      [DEADLINE_HEADER]: String(deadlineMs),
      [TENANT_HEADER]: tenant,
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signature,
    },
    body,
  } satisfies LoadRequest;
}

/** Counts one tenant's answers as they end: statuses, refusal codes, answers that are not their request's. */
class TenantCounter {
  readonly statuses: Record<string, number> = {};
  readonly refusals: Record<string, number> = {};
  mixedUp = 0;
  readonly #expected = new Map<string, number[]>();

  expect(id: string, classes: number[]): void {
    this.#expected.set(id, classes);
  }

  /** A request its isolate answered itself, without a call (within a region's Retry-After). */
  answeredAtTheEdge(id: string): void {
    this.#expected.delete(id);
    this.statuses.edge = (this.statuses.edge ?? 0) + 1;
  }

  record(response: LoadResponse, id: string): void {
    this.statuses[response.status] = (this.statuses[response.status] ?? 0) + 1;
    const expected = this.#expected.get(id);
    this.#expected.delete(id);
    if (response.status === 429) {
      let code = "unknown";
      try {
        code = (JSON.parse(response.body) as { code?: string }).code ?? code;
      } catch {}
      this.refusals[code] = (this.refusals[code] ?? 0) + 1;
    }
    if (response.status !== 200) return;
    try {
      const answer = JSON.parse(response.body) as { id?: string; predictions?: { class: number }[] };
      const classes = answer.predictions?.map((p) => p.class);
      if (answer.id !== id || JSON.stringify(classes) !== JSON.stringify(expected)) this.mixedUp++;
    } catch {
      this.mixedUp++;
    }
  }

  tally(
    run: {
      sent: number;
      summary: { latency: { p50Ms: number; p99Ms: number }; durationS: number; sendLagMs: { p99: number } };
    },
    rows: number,
  ): TenantTally {
    return {
      sendLagP99Ms: run.summary.sendLagMs.p99,
      sent: run.sent,
      statuses: this.statuses,
      refusals: this.refusals,
      mixedUp: this.mixedUp,
      p50Ms: run.summary.latency.p50Ms,
      p99Ms: run.summary.latency.p99Ms,
      rowsPerS: round(((this.statuses["200"] ?? 0) * rows) / Math.max(run.summary.durationS, 1e-3)),
    };
  }
}

/** A tenant's stream of forwards: request i carries rows from `rows` in turn, `per` at a time. */
export function stream(
  tenant: string,
  model: ValidationModel,
  rows: readonly HeldoutRow[],
  per: number,
  sloMs: number,
) {
  const counter = new TenantCounter();
  const next = (i: number): LoadRequest => {
    const picked = Array.from({ length: per }, (_, k) => rows[(i * per + k) % rows.length]!);
    const id = `${tenant}-${i}`;
    counter.expect(
      id,
      picked.map((r) => argmax(r.expected[model.name]!)),
    );
    return forward(tenant, id, model.name, picked, sloMs);
  };
  const onResponse = (response: LoadResponse, _request: LoadRequest, i: number) =>
    counter.record(response, `${tenant}-${i}`);
  return { counter, next, onResponse };
}

/**
 * B's flood as `isolates` edge isolates forward it: request i is isolate i mod `isolates`'s, and an isolate the pool
 * shed sends none of B's rows for the Retry-After (edge/forward/tenant-backoff.ts, with the edge's own policy):
 * those it answers itself, degraded, counted `edge`. The requests due are taken every millisecond rather than
 * polled for one by one (tools/probe/schedule.ts): most are answered at the edge, and polling for each of tens of
 * thousands a second would take the generator's core from A's requests; each sent one is still timed from when it
 * was due.
 */
async function floodThroughIsolates(
  origin: string,
  rate: number,
  durationS: number,
  connections: number,
  isolates: number,
  b: ReturnType<typeof stream>,
) {
  const client = new LoadClient(origin, { connections, timeoutMs: 30_000 });
  const tally = new LoadTally();
  const until = new Array<number>(isolates).fill(0);
  const inflight = new Set<Promise<void>>();
  const startedAt = performance.now();
  const total = Math.max(1, Math.round(rate * durationS));
  let i = 0;
  try {
    while (i < total) {
      const now = performance.now();
      for (; i < total && dueAt(startedAt, i, rate) <= now; i++) {
        const isolate = i % isolates;
        if (now < until[isolate]!) {
          b.counter.answeredAtTheEdge(`b-${i}`);
          continue;
        }
        const request = b.next(i);
        const n = i;
        const p = client.send(request, dueAt(startedAt, i, rate), startedAt).then((response) => {
          tally.record(response);
          b.onResponse(response, request, n);
          if (response.status === 429 && response.body.includes('"tenant_shed"')) {
            until[isolate] = performance.now() + shedBackoffMs(headerValue(response.headers, "retry-after"));
          }
        });
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
      }
      await sleep(1);
    }
    await Promise.all(inflight);
    return { sent: i, summary: tally.summary((performance.now() - startedAt) / 1000) };
  } finally {
    await client.close();
  }
}

const STREAM = fileURLToPath(new URL("./tenant-stream.ts", import.meta.url));

/**
 * Tenant A's single unsure rows from a child process (tenant-stream.ts), open loop: its tally. A process of its own,
 * so that A's answers are not read by the event loop that is busy sending B's flood and reading its answers (the
 * flood stands for other machines).
 */
async function tenantStream(args: StreamArgs): Promise<TenantTally> {
  const { stdout } = await run(process.execPath, [STREAM, JSON.stringify(args)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as TenantTally;
}

/** Pin the pool (and its children) to one core and this process to another; undo() puts this process back. */
function pinCores(pool: RegionalPool, wanted: boolean): { description: string; undo: () => void } {
  const allowed = affinity(process.pid) ?? "";
  const plan = corePlan(wanted, parseCpuList(allowed), haveTaskset());
  if (!plan.pinned) return { description: `unpinned (${plan.why})`, undo: () => {} };
  const ok = [pool.pid, ...descendants(pool.pid)].every((pid) => pinProcess(pid, plan.server));
  if (!ok || !pinProcess(process.pid, plan.generator)) {
    pinProcess(process.pid, allowed);
    return { description: "unpinned (taskset refused)", undo: () => {} };
  }
  return {
    description: `the pool on core ${plan.server}, the generators (A's process, B's flood) on core ${plan.generator}`,
    undo: () => pinProcess(process.pid, allowed),
  };
}

/** The `edgecascade_tenant_requests_total` series of a pool's metrics text, by tenant and outcome. */
function tenantCounts(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const m of text.matchAll(/^edgecascade_tenant_requests_total\{tenant="([^"]+)",outcome="([^"]+)"\} (\S+)$/gm)) {
    out[m[1]!] ??= {};
    out[m[1]!]![m[2]!] = Number(m[3]);
  }
  for (const m of text.matchAll(/^edgecascade_tenant_rows_total\{tenant="([^"]+)",share="([^"]+)"\} (\S+)$/gm)) {
    out[m[1]!] ??= {};
    out[m[1]!]![`rows ${m[2]}`] = Number(m[3]);
  }
  // The pool's own p99 of each tenant's requests (receipt to answer), the upper bound of its histogram bucket, ms.
  const buckets = new Map<string, [number, number][]>();
  for (const m of text.matchAll(
    /^edgecascade_tenant_request_duration_seconds_bucket\{le="([^"]+)",tenant="([^"]+)"\} (\S+)$/gm,
  )) {
    const list = buckets.get(m[2]!) ?? [];
    list.push([m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[3])]);
    buckets.set(m[2]!, list);
  }
  for (const [tenant, list] of buckets) {
    const total = list.at(-1)?.[1] ?? 0;
    const le = list.find(([, n]) => n >= 0.99 * total)?.[0];
    if (total > 0 && le !== undefined) {
      out[tenant] ??= {};
      out[tenant]!["pool p99 ≤ ms"] = le * 1000;
    }
  }
  return out;
}

/** A's promise (tenant-verdict.ts): its p99 beside the flood at most 1.5x alone, at least 99% answered. */
const SLO = (deadlineMs: number) => ({ p99Ratio: 1.5, successRate: 0.99, deadlineMs });

/** The budget of the requests sent through the edge during the flood, ms: who is shed, not how fast. */
const EDGE_BUDGET_MS = 100;

/** Edge isolates B's flood comes through on the CPU-bound pool, each backing off when shed. */
const ISOLATES = 64;

/** The simulated accelerator of the first pool: a batch of up to 16 rows takes 2 ms, whatever its rows. */
export const DEVICE = { runMs: 2, maxBatch: 16 } as const;

/**
 * The scenario on one kind of pool: `device`, a pool whose capacity is its (simulated) accelerator's, with CPU to
 * spare for refusals, as a GPU pool's, flooded by every request B sends; `cpu`, the CPU-bound pool of this machine,
 * whose every refusal takes some of the capacity B floods, flooded as edge isolates forward B's rows (each backing
 * off for the Retry-After of a shed). A's rate is `aShare` of the capacity in rows (device) or requests (cpu: a row
 * alone costs a CPU pool nearly a request's work); its reservation twice that.
 */
async function onePool(options: TwoTenantOptions, kind: "device" | "cpu"): Promise<TwoTenantRun> {
  const { model, capacityS, phaseS, connections, sloMs, bRows, aShare, flood } = options;
  const unsure = model.rows.filter((r) => !edgeAnswers(r, model.threshold, model.edgeModel));
  const env = { REGIONAL_SHARED_SECRET: SECRET };
  const extraArgs =
    kind === "device" ? ["--simulated-run-ms", String(DEVICE.runMs), "--max-batch", String(DEVICE.maxBatch)] : [];

  // The pool's capacity for B's requests, measured first on a pool of its own (the reservation depends on it).
  console.error(`two tenants, ${kind} pool: measuring its capacity for ${bRows}-row requests...`);
  const probe = await startRegionalPool({ region: "tenants", env, extraArgs });
  let capacity: TwoTenantRun["capacity"];
  let pinned: string;
  try {
    const pin = pinCores(probe, options.pin);
    pinned = pin.description;
    try {
      const b = stream("b", model, unsure, bRows, 60_000);
      await closedLoop({ origin: probe.url, connections: 32, durationS: 1, next: b.next });
      const { summary } = await closedLoop({ origin: probe.url, connections: 32, durationS: capacityS, next: b.next });
      capacity = {
        rowsPerS: round((summary.ok * bRows) / summary.durationS),
        reqPerS: round(summary.ok / summary.durationS),
        statuses: Object.fromEntries(Object.entries(summary.statuses).map(([k, v]) => [k, v])),
      };
    } finally {
      pin.undo();
    }
  } finally {
    await probe.stop();
  }
  const aRate = Math.max(1, round((kind === "device" ? capacity.rowsPerS : capacity.reqPerS) * aShare));
  const reservation = 2 * aRate;
  const bRate = (capacity.rowsPerS * flood) / bRows;
  console.error(
    `  capacity ${capacity.rowsPerS} rows/s (${capacity.reqPerS} req/s); A ${aRate} rows/s within a reservation of ${reservation}, B ${round(bRate)} req/s (${flood}x)`,
  );

  const pool = await startRegionalPool({
    region: "tenants",
    env: { ...env, REGIONAL_TENANTS: `a=guaranteed:${reservation},b=best-effort` },
    extraArgs,
  });
  const phases: TenantPhase[] = [];
  let edgeCounts: TwoTenantRun["edge"];
  let poolCounts: TwoTenantRun["poolCounts"];
  try {
    const pin = pinCores(pool, options.pin);
    try {
      // Warm the pool's connections and answering rate, then A alone, then A beside B's flood.
      const warm = stream("a", model, unsure, 1, sloMs);
      await closedLoop({ origin: pool.url, connections: 8, durationS: 1, next: warm.next });
      // A's requests from a process of their own: the one that floods is busy reading B's answers.
      const runA = () => tenantStream({ origin: pool.url, rate: aRate, durationS: phaseS, model: model.name, sloMs });
      const alone = async (r: number) => {
        phases.push({ round: r, phase: "A alone", a: { ...(await runA()), offeredRps: aRate } });
      };
      const beside = async (r: number) => {
        const b = stream("b", model, unsure, bRows, sloMs);
        const [ofA, runOfB] = await Promise.all([
          runA(),
          kind === "device"
            ? openLoop({ origin: pool.url, rate: bRate, durationS: phaseS, connections, timeoutMs: 30_000, ...b })
            : floodThroughIsolates(pool.url, bRate, phaseS, connections, ISOLATES, b),
        ]);
        phases.push({
          round: r,
          phase: `A beside B at ${flood}x the capacity`,
          a: { ...ofA, offeredRps: aRate },
          b: { ...b.counter.tally(runOfB, bRows), offeredRps: round(bRate), offeredRowsPerS: round(bRate * bRows) },
        });
      };
      // Rounds of the two phases back to back, every other one in reverse order: a round's ratio is taken within it.
      for (let r = 1; r <= options.rounds; r++) {
        if (r % 2 === 1) {
          await alone(r);
          await beside(r);
        } else {
          await beside(r);
          await alone(r);
        }
        for (const p of phases.filter((x) => x.round === r)) {
          console.error(
            `  round ${r}, ${p.phase}: A ${JSON.stringify(p.a.statuses)} p99 ${p.a.p99Ms} ms${p.b ? `; B ${JSON.stringify(p.b.statuses)} ${JSON.stringify(p.b.refusals)}` : ""}`,
          );
        }
      }
    } finally {
      pin.undo();
    }
    if (kind === "device") edgeCounts = await throughTheEdge(pool, options, unsure, bRate);
    poolCounts = tenantCounts(await (await fetch(`${pool.url}/metrics`)).text());
    console.error(`  the pool's counts: ${JSON.stringify(poolCounts)}`);
  } finally {
    await pool.stop();
  }
  const rounds = Array.from({ length: options.rounds }, (_, i) => {
    const of = phases.filter((p) => p.round === i + 1);
    const withB = of.find((p) => p.b)!;
    return { aAlone: of.find((p) => !p.b)!.a, aWithB: withB.a, b: withB.b! };
  });
  return {
    kind,
    pinned,
    capacity,
    reservationRowsPerS: reservation,
    phases,
    ...(edgeCounts ? { edge: edgeCounts } : {}),
    poolCounts,
    verdict: twoTenantVerdict(rounds, SLO(sloMs)),
  };
}

/** While B floods the pool, one Worker in front of it sends each tenant's unsure rows, one at a time. */
async function throughTheEdge(
  pool: RegionalPool,
  options: TwoTenantOptions,
  unsure: readonly HeldoutRow[],
  bRate: number,
): Promise<NonNullable<TwoTenantRun["edge"]>> {
  const { model, phaseS, connections, bRows } = options;
  const edge = await startEdgeWorker({
    vars: {
      REGIONS: JSON.stringify([{ name: "pool", url: pool.url, latitude: 39.04, longitude: -77.49 }]),
      API_KEYS: JSON.stringify([
        { key: "key-a", tenant: "a" },
        { key: "key-b", tenant: "b" },
      ]),
      REGIONAL_SHARED_SECRET: SECRET,
      HEDGE_BUDGET_RATIO: "0",
      HEDGE_BUDGET_BURST: "0",
    },
    rateLimit: false,
  });
  const counts: NonNullable<TwoTenantRun["edge"]> = { a: {}, b: {}, bDegradedReasons: {} };
  try {
    const ready = await edge.dispatchFetch(`${edge.url}/v2/health/ready`);
    if (ready.status !== 200) throw new Error(`edge variants did not load: ${ready.status}`);
    // The flood's forwards carry the deadline the edge's do: admission weighs each request against its own.
    const b = stream("b", model, unsure, bRows, EDGE_BUDGET_MS);
    const flooding = openLoop({
      origin: pool.url,
      rate: bRate,
      durationS: Math.min(phaseS, 5),
      connections,
      timeoutMs: 30_000,
      ...b,
    });
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 20; i++) {
      for (const [tenant, key] of [
        ["a", "key-a"],
        ["b", "key-b"],
      ] as const) {
        const res = await edge.dispatchFetch(`${edge.url}/v1/classify`, {
          method: "POST",
          // A budget the loaded machine's forwards fit in: this is about who is shed, not about time.
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "x-edgecascade-budget-ms": String(EDGE_BUDGET_MS),
          },
          // Two unsure rows no request of this run sent together before: a repeat would be a cache hit, never a forward.
          body: JSON.stringify({
            model: model.name,
            inputs: [i, i + (tenant === "a" ? 1 : 6) + Math.floor(i / unsure.length)].map(
              (r) => unsure[r % unsure.length]!.input,
            ),
          }),
        });
        const body = (await res.json()) as { servedBy?: string };
        const what =
          res.status === 200 ? (body.servedBy ?? "?").replace(/^regional:.*/, "regional") : `HTTP ${res.status}`;
        counts[tenant][what] = (counts[tenant][what] ?? 0) + 1;
        const reason = res.headers.get("x-edgecascade-degraded");
        if (tenant === "b" && reason) counts.bDegradedReasons[reason] = (counts.bDegradedReasons[reason] ?? 0) + 1;
      }
    }
    await flooding;
    console.error(
      `  through the edge during the flood: A ${JSON.stringify(counts.a)}, B ${JSON.stringify(counts.b)} ${JSON.stringify(counts.bDegradedReasons)}`,
    );
  } finally {
    await edge.dispose();
  }
  return counts;
}

export async function twoTenants(options: TwoTenantOptions): Promise<TwoTenantReport> {
  const device = await onePool(options, "device");
  const cpu = await onePool(options, "cpu");
  return { settings: { ...options, model: options.model.name }, runs: [device, cpu] };
}

/** Tallies summed (latencies left out). */
function mergeTallies(ts: readonly TenantTally[]): TenantTally {
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
    return into;
  };
  return {
    sent: ts.reduce((n, t) => n + t.sent, 0),
    statuses: ts.reduce((acc, t) => add(acc, t.statuses), {} as Record<string, number>),
    refusals: ts.reduce((acc, t) => add(acc, t.refusals), {} as Record<string, number>),
    mixedUp: ts.reduce((n, t) => n + t.mixedUp, 0),
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    rowsPerS: Number.NaN,
    sendLagP99Ms: Number.NaN,
  };
}

/** B's requests by how they ended, as shares. */
function bShares(b: TenantTally): string {
  const pct = (n: number | undefined) => `${(((n ?? 0) / Math.max(1, b.sent)) * 100).toFixed(1)}%`;
  return [
    `${pct(b.statuses["200"])} answered`,
    `${pct(b.statuses["429"])} refused 429 (${JSON.stringify(b.refusals)})`,
    `${pct(b.statuses["504"])} 504 (admitted, then past its deadline in the queue)`,
    ...(b.statuses.edge
      ? [`${pct(b.statuses.edge)} answered by its isolate without a call (within a Retry-After)`]
      : []),
  ].join(", ");
}

/** The scenario's section of bench/overload.md. */
export function twoTenantMarkdown(r: TwoTenantReport): string[] {
  const s = r.settings;
  const others = (t: TenantTally) =>
    JSON.stringify(Object.fromEntries(Object.entries(t.statuses).filter(([k]) => k !== "200" && k !== "429")));
  const row = (round: number, phase: string, tenant: string, t: TenantTally & { offeredRps: number }) =>
    `| ${round} | ${phase} | ${tenant} | ${t.offeredRps} | ${t.sent} | ${t.statuses["200"] ?? 0} | ${t.rowsPerS} | ${JSON.stringify(t.refusals)} | ${others(t)} | ${t.p50Ms.toFixed(2)} / ${t.p99Ms.toFixed(2)} | ${t.sendLagP99Ms} | ${t.mixedUp} |`;
  const run = (x: TwoTenantRun): string[] => {
    const v = x.verdict;
    const alone = x.phases.find((p) => !p.b)!;
    const withB = x.phases.find((p) => p.b)!;
    const bAll = mergeTallies(x.phases.flatMap((p) => (p.b ? [p.b] : [])));
    const title =
      x.kind === "device"
        ? `### A pool whose capacity is its accelerator's (\`--simulated-run-ms ${DEVICE.runMs} --max-batch ${DEVICE.maxBatch}\`)`
        : "### The CPU-bound pool of this machine";
    const what =
      x.kind === "device"
        ? [
            `A batch of up to ${DEVICE.maxBatch} rows takes ${DEVICE.runMs} ms whatever its rows, as on an accelerator: the pool's capacity is the`,
            "device's and its CPU has room to refuse what it cannot run, as a GPU pool's does (the `gpu` overlay runs four",
            "workers per GPU). There is no GPU here; the rows still run through onnxruntime after the wait.",
          ]
        : [
            "The same pool without the simulation: on this shared 2-core machine every refusal of B's flood (headers read,",
            "429 written, the body drained) takes some of the one core the pool has, which the admitted work needs too. B's",
            `flood comes as ${ISOLATES} edge isolates forward it: an isolate the pool shed sends none of B's rows for the`,
            "Retry-After (edge/forward/tenant-backoff.ts) and answers them itself, degraded (`edge` below).",
          ];
    return [
      title,
      "",
      ...what,
      `Capacity for B's ${s.bRows}-row requests, closed loop on a pool of its own: **${x.capacity.rowsPerS} rows/s** (${x.capacity.reqPerS} req/s).`,
      `\`--tenants a=guaranteed:${x.reservationRowsPerS},b=best-effort\`: A sends ${alone.a.offeredRps} single rows/s, half its reservation;`,
      `B offers ${withB.b?.offeredRowsPerS} rows/s (${withB.b?.offeredRps} req/s), ${s.flood}x the capacity. ${x.pinned}.`,
      "",
      "| round | phase | tenant | offered req/s | sent | 200 | rows/s answered | 429 by code | other | p50 / p99 ms | generator lag p99 ms | mixed up |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...x.phases.flatMap((p) => [row(p.round, p.phase, "A", p.a), ...(p.b ? [row(p.round, p.phase, "B", p.b)] : [])]),
      "",
      `- **A's p99 beside B's flood: ${v.p99Ratio}x its p99 alone**, the median of the rounds' own ratios (${v.p99Ratios.join(", ")}); A`,
      `  answered ${(v.successWithB * 100).toFixed(2)}% beside it (alone ${(v.successAlone * 100).toFixed(2)}%). Within its SLO (p99 at most 1.5x alone, ≥ 99% answered): **${v.aWithinSlo ? "yes" : "no"}**; p99 within its ${s.sloMs} ms deadline in every round: ${v.p99WithinDeadline ? "yes" : "no"}. The pool's own p99 of A's requests over the run (receipt to answer, its histogram's bucket): ≤ ${x.poolCounts.a?.["pool p99 ≤ ms"] ?? "?"} ms.`,
      `- B, over the rounds: ${bShares(bAll)}${v.bRefusedNotFailed ? "" : "; **and other statuses**"}. Through the edge every one but the 200s is an answer of its own model, degraded, never a 5xx. Lost: ${v.lost}. Mixed up: ${v.mixedUp}.`,
      ...(x.edge
        ? [
            `- Through one edge Worker in front of the pool while B floods it (20 unsure rows per tenant, one at a time, each`,
            `  with \`x-edgecascade-budget-ms: ${EDGE_BUDGET_MS}\`, the flood's forwards that long too: who is shed, not how fast):`,
            `  A ${JSON.stringify(x.edge.a)}; B ${JSON.stringify(x.edge.b)}, degraded because ${JSON.stringify(x.edge.bDegradedReasons)}.`,
          ]
        : []),
      `- The pool's own counts (\`edgecascade_tenant_requests_total\`, \`_rows_total\`): ${Object.entries(x.poolCounts)
        .map(([t, c]) => `${t} ${JSON.stringify(c)}`)
        .join("; ")}.`,
    ];
  };
  return [
    "## Two tenants at a pool: one within its reservation, one flooding",
    "",
    "Every request is a forward as the edge sends it, straight to the pool: `/v1/classify`, signed with its tenant",
    `(\`x-edgecascade-tenant\`), \`${DEADLINE_HEADER}: ${s.sloMs}\`. The flood stands for the forwards of many edge isolates,`,
    "more than one Worker on this machine could send. Open loop; latency counts from when each",
    `request was due; ${s.phaseS} s per phase; B over ${s.connections} connections, A over 64. Every 200 is checked against its request`,
    "(its `id` and each row's class); a request with no answer is lost.",
    "",
    ...r.runs.flatMap((x) => [...run(x), ""]),
  ];
}
