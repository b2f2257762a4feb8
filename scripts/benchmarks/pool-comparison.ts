import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RegionalPool, type RegionalPoolOptions, startRegionalPool } from "../stack/regional-pool.ts";
import { otherCores, readLoad } from "./other-load.ts";
import { median } from "./paired-ratio.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { type WrkRequest, type WrkResult, wrk, wrkScript } from "./wrk.ts";

/**
 * bench:regional's comparison (scripts/benchmarks/regional.ts says what each server is): the pool (a) against
 * the plain servers (b), (c), the reference (f) and, with `ownStack`, the pool's own stack (d), (e); every server
 * started once and running for the whole comparison, `rounds` rounds of one measurement each.
 */
export interface PoolComparisonOptions {
  /** What every server is started with (region, workers, environment). */
  pool: RegionalPoolOptions;
  model: string;
  /** POST /v1/classify bodies, one held-out row each, sent in turn. */
  requests: readonly WrkRequest[];
  ownStack: boolean;
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  log: (line: string) => void;
  /** Called with each server's pid once it is ready (bench:regional pins it to the servers' core). */
  onStarted?: (pid: number) => void;
  /** Called once every server has started, before the first measurement. */
  onAllStarted?: () => void;
}

export type Key = "a" | "b" | "c" | "d" | "e" | "f";
interface Server {
  key: Key;
  name: string;
  /** Whether it is the pool's own stack, which reports its batches in /metrics. */
  pool: boolean;
  start(): Promise<RegionalPool>;
}

/** The order of a round's measurements (reversed every other round). */
const MEASURE_ORDER: readonly Key[] = ["a", "c", "f", "b", "d", "e"];

export interface Measurement extends WrkResult {
  /** Rows per session.run during the measurement, from the pool's own metrics; null for the plain servers. */
  meanBatch: number | null;
  /** Server CPU per answered request, in user space (JS, onnxruntime) and in the kernel (mostly socket I/O). */
  userUsPerRequest: number;
  kernelUsPerRequest: number;
  /** Cores that other work on the machine kept busy during the measurement (other-load.ts); null off Linux. */
  otherCores: number | null;
}

/** Mean size of an answer, body and header block (status line and headers as received), in bytes. */
export interface AnswerBytes {
  body: number;
  headers: number;
}

export interface Summary {
  name: string;
  reqPerSec: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and non-2xx answers over all rounds. */
  errors: number;
  meanBatch: number | null;
  userUsPerRequest: number;
  kernelUsPerRequest: number;
  /** Mean bytes of an answer to one held-out row. */
  answerBytes: AnswerBytes;
}

const PLAIN = fileURLToPath(new URL("./plain-servers.ts", import.meta.url));
const OWN_STACK = fileURLToPath(new URL("./regional-baselines.ts", import.meta.url));
const round2 = (x: number) => Math.round(x * 100) / 100;

function servers(o: PoolComparisonOptions): Server[] {
  const common = o.pool;
  const plainArgs = (mode: string) => ["--mode", mode, "--model", o.model];
  const ownStack = (mode: string) => () =>
    startRegionalPool({ ...common, script: OWN_STACK, extraArgs: ["--mode", mode] });
  return [
    { key: "a", name: "regional pool (dynamic batching)", pool: true, start: () => startRegionalPool(common) },
    {
      key: "b",
      name: "plain node:http, one session.run per request",
      pool: false,
      start: () => startRegionalPool({ ...common, script: PLAIN, extraArgs: plainArgs("per-request") }),
    },
    {
      key: "c",
      name: "plain node:http, JSON.parse and a constant answer",
      pool: false,
      start: () => startRegionalPool({ ...common, script: PLAIN, extraArgs: plainArgs("constant") }),
    },
    {
      key: "f",
      name: "reference: plain node:http, one session.run per setImmediate batch",
      pool: false,
      start: () => startRegionalPool({ ...common, script: PLAIN, extraArgs: plainArgs("batching") }),
    },
    ...(o.ownStack
      ? ([
          { key: "d", name: "pool's own stack, one session.run per request", pool: true, start: ownStack("naive") },
          { key: "e", name: "pool's own stack, no inference", pool: true, start: ownStack("ceiling") },
        ] satisfies Server[])
      : []),
  ];
}

async function batchCounts(url: string, model: string): Promise<{ rows: number; executions: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`) && l.includes(`model="${model}"`))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return { rows: sum("edgecascade_inference_rows_total"), executions: sum("edgecascade_inference_executions_total") };
}

/** The answer to each held-out row sent once (POST `path`, one row per request), averaged. */
async function answerBytes(url: string, bodies: readonly string[]): Promise<AnswerBytes> {
  let body = 0;
  let headers = 0;
  for (const sent of bodies) {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: sent });
    body += (await res.arrayBuffer()).byteLength;
    headers += `HTTP/1.1 ${res.status} ${res.statusText}\r\n\r\n`.length;
    for (const [name, value] of res.headers) headers += `${name}: ${value}\r\n`.length;
  }
  return { body: Math.round(body / bodies.length), headers: Math.round(headers / bodies.length) };
}

export async function comparePools(o: PoolComparisonOptions) {
  const { connections, durationS, warmupS } = o;
  const SERVERS = servers(o);

  /** One measurement of a running server: a short warm-up, then wrk, its CPU and (the pool's) batches. */
  async function measure(server: Server, pool: RegionalPool, script: string): Promise<Measurement> {
    const url = `${pool.url}/v1/classify`;
    await wrk(url, { connections, seconds: warmupS, script });
    const before = server.pool ? await batchCounts(pool.url, o.model) : undefined;
    const cpuBefore = cpuSeconds(pool.pid);
    // The server, this process and (once waited for) the wrk run: everything else on the machine is other work.
    const loadBefore = readLoad([pool.pid, process.pid]);
    const result = await wrk(url, { connections, seconds: durationS, script });
    const loadAfter = readLoad([pool.pid, process.pid]);
    const cpuAfter = cpuSeconds(pool.pid);
    const after = server.pool ? await batchCounts(pool.url, o.model) : undefined;
    const executions = before && after ? after.executions - before.executions : 0;
    return {
      ...result,
      meanBatch: before && after && executions > 0 ? (after.rows - before.rows) / executions : null,
      userUsPerRequest: ((cpuAfter.user - cpuBefore.user) * 1e6) / result.requests,
      kernelUsPerRequest: ((cpuAfter.kernel - cpuBefore.kernel) * 1e6) / result.requests,
      otherCores: loadBefore && loadAfter ? otherCores(loadBefore, loadAfter, result.seconds) : null,
    };
  }

  const dir = mkdtempSync(join(tmpdir(), "edgecascade-bench-"));
  const script = join(dir, "rows.lua");
  writeFileSync(script, wrkScript(o.requests));
  const raw = Object.fromEntries(SERVERS.map((s) => [s.key, [] as Measurement[]])) as Record<Key, Measurement[]>;
  const bytes = {} as Record<Key, AnswerBytes>;
  // Every server runs for the whole comparison (an idle one takes no CPU), so that a round (one short
  // measurement of each) spans seconds, not minutes: load from elsewhere on a shared machine then hits a
  // round's servers alike, and the rounds' own ratios cancel it out.
  const running: RegionalPool[] = [];
  try {
    for (const server of SERVERS) running.push(await server.start());
    for (const pool of running) o.onStarted?.(pool.pid);
    o.onAllStarted?.();
    for (const [i, server] of SERVERS.entries()) {
      bytes[server.key] = await answerBytes(
        `${running[i]!.url}/v1/classify`,
        o.requests.map((r) => r.body as string),
      );
    }
    for (let round = 1; round <= o.rounds; round++) {
      // (a) next to (c), and every other round in reverse order: a neighbour's burst of a few seconds then hits the
      // pool and its baseline most alike, and no server always runs right after the same one.
      const order = [...SERVERS.entries()].sort(
        ([, x], [, y]) => MEASURE_ORDER.indexOf(x.key) - MEASURE_ORDER.indexOf(y.key),
      );
      if (round % 2 === 0) order.reverse();
      for (const [i, server] of order) {
        const m = await measure(server, running[i]!, script);
        raw[server.key].push(m);
        o.log(
          `round ${round} (${server.key}) ${m.reqPerSec.toFixed(0)} req/s  p50 ${m.p50Ms.toFixed(2)}  ` +
            `p95 ${m.p95Ms.toFixed(2)}  p99 ${m.p99Ms.toFixed(2)} ms  errors ${m.errors}  non-2xx ${m.non2xx}  ` +
            `rows/run ${m.meanBatch?.toFixed(1) ?? "-"}  server CPU/request ${m.userUsPerRequest.toFixed(0)} µs user + ` +
            `${m.kernelUsPerRequest.toFixed(0)} µs kernel  other work ${m.otherCores?.toFixed(2) ?? "-"} cores\n`,
        );
      }
    }
  } finally {
    await Promise.all(running.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }

  function summarize(server: Server): Summary {
    const ms = raw[server.key];
    const med = (pick: (m: Measurement) => number) => median(ms.map(pick));
    return {
      name: server.name,
      reqPerSec: Math.round(med((m) => m.reqPerSec)),
      p50Ms: round2(med((m) => m.p50Ms)),
      p95Ms: round2(med((m) => m.p95Ms)),
      p99Ms: round2(med((m) => m.p99Ms)),
      errors: ms.reduce((n, m) => n + m.errors + m.non2xx, 0),
      meanBatch: ms[0]!.meanBatch === null ? null : round2(med((m) => m.meanBatch ?? 0)),
      userUsPerRequest: Math.round(med((m) => m.userUsPerRequest)),
      kernelUsPerRequest: Math.round(med((m) => m.kernelUsPerRequest)),
      answerBytes: bytes[server.key],
    };
  }
  const summary = Object.fromEntries(SERVERS.map((s) => [s.key, summarize(s)])) as Record<Key, Summary>;

  /**
   * Ratios are the median of each round's own ratio: a, b and c of one round ran within a minute, so a
   * neighbour's load that comes and goes moves all three together and cancels out.
   */
  const perRound = raw.a.map((a, i) => ({
    aOverB: a.reqPerSec / raw.b[i]!.reqPerSec,
    aOverC: a.reqPerSec / raw.c[i]!.reqPerSec,
    fOverC: raw.f[i]!.reqPerSec / raw.c[i]!.reqPerSec,
    /** Other work during (a)'s and (c)'s measurements, the more of the two, in cores. */
    otherCores:
      a.otherCores === null || raw.c[i]!.otherCores === null ? null : Math.max(a.otherCores, raw.c[i]!.otherCores!),
  }));
  const ratios = {
    aOverB: round2(median(perRound.map((r) => r.aOverB))),
    aOverC: round2(median(perRound.map((r) => r.aOverC))),
    /** The reference (f) over (c): what a server that runs the model per batch reaches; no target. */
    fOverC: round2(median(perRound.map((r) => r.fOverC))),
  };
  /** Server CPU per request relative to the pool's: barely moved by other load on the box. */
  const cpu = (k: Key) => summary[k].userUsPerRequest + summary[k].kernelUsPerRequest;
  const cpuPerRequest = {
    bOverA: round2(cpu("b") / cpu("a")),
    cOverA: round2(cpu("c") / cpu("a")),
    fOverA: round2(cpu("f") / cpu("a")),
  };
  const others = SERVERS.flatMap((s) => raw[s.key].map((m) => m.otherCores)).filter((x) => x !== null);
  /** Other work on the machine during the comparison's measurements, in cores: median and most. */
  const otherWork = others.length ? { median: round2(median(others)), max: round2(Math.max(...others)) } : null;
  const table = [
    "| server | req/s | p50 ms | p95 ms | p99 ms | rows per run | server CPU per request (user + kernel) | answer bytes (body + headers) | errors |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...SERVERS.map((s) => {
      const r = summary[s.key];
      const cpuText = `${r.userUsPerRequest} + ${r.kernelUsPerRequest} µs`;
      const bytesText = `${r.answerBytes.body} + ${r.answerBytes.headers}`;
      return `| (${s.key}) ${r.name} | ${r.reqPerSec} | ${r.p50Ms} | ${r.p95Ms} | ${r.p99Ms} | ${r.meanBatch ?? "–"} | ${cpuText} | ${bytesText} | ${r.errors} |`;
    }),
  ].join("\n");
  return { summary, raw, perRound, ratios, cpuPerRequest, otherWork, table };
}
