import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { processFlags } from "../../tools/cli/command.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "./core-pinning.ts";
import { measureGrpcWire } from "./grpc-wire.ts";
import { holdBenchLock } from "./lock.ts";
import { otherCores, readLoad } from "./other-load.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { measureTracingCost } from "./tracing-cost.ts";
import { haveWrk, type WrkRequest, type WrkResult, wrk, wrkScript } from "./wrk.ts";

/**
 * `npm run bench:regional`: on loopback, one load generator (wrk, one thread, the same connections for all),
 * one server process measured at a time, rounds interleaving the servers so that drift on a shared machine
 * hits all:
 *   (a) the regional pool (`--workers 1`, dynamic batching, defaults otherwise),
 *   (b) what a user would write instead: a plain node:http server doing one onnxruntime-node session.run
 *       per request (scripts/benchmarks/plain-servers.ts),
 *   (c) a plain node:http server that parses the JSON body and answers a constant: Node's HTTP layer alone,
 *   (f) a reference, not a baseline: a plain node:http server that runs the model once per setImmediate batch
 *       and answers the pool's body (scripts/benchmarks/plain-servers.ts --mode batching): what any server
 *       that runs the model per batch reaches against (c) on this machine, reported as f/c beside a/c.
 * With `--own-stack`, also the pool's own stack (Hono app, validation, metrics) with the batcher swapped out:
 *   (d) one session.run per request, (e) no inference (scripts/benchmarks/regional-baselines.ts).
 * Load: POST /v1/classify, one held-out row per request, the 360 rows in turn. The report gives medians, and
 * the a/b, a/c and f/c ratios as the median of each round's own ratio.
 * wrk rather than a Node generator: in C it leaves more of the cores to the server. It is closed-loop: its
 * latencies are those at the throughput it reached.
 * Then the wire formats, on the pool alone: v2 infer with JSON data against Triton's binary tensor data
 * (little-endian FP32 in and out), at 1 and 64 rows per request (`--wire-rounds` rounds); then the same
 * against gRPC, from one Node generator for all three (scripts/benchmarks/grpc-wire.ts; wrk speaks no gRPC). Last,
 * what tracing costs: the pool with tracing off, at 1%, at 100% and under unsampled parents
 * (scripts/benchmarks/tracing-cost.ts, `--tracing-rounds`, 0 skips it).
 * With `--pin on` (the default where `taskset` exists) every server runs on one core and wrk (with this process,
 * the gRPC section's generator) on the other (core-pinning.ts), as in production, where a pool does not share
 * its cores with its clients, and every server gets the same core to itself. Unpinned, where wrk and the server
 * run is the scheduler's choice, round by round (on this 2-core machine the servers' CPU per request then moved
 * more: docs/performance.md). A pinned server cannot move away from other work on its core either: on a shared
 * machine the report's load average says how much there was.
 * Takes about (rounds x servers + wire-rounds x 4) x (warmup + duration) plus a few seconds per server start,
 * then the gRPC rounds: with the defaults, (7 x 4 + 3 x 4) x 5 s, about 3.5 minutes before gRPC.
 */
const { values: args } = processFlags({
  name: "bench:regional",
  usage: "npm run bench:regional -- [options]",
  flags: {
    connections: { type: "number", placeholder: "N", default: 64, min: 1, integer: true, help: "wrk connections" },
    duration: { type: "number", placeholder: "S", default: 4, min: 1, help: "seconds of each measured run" },
    warmup: { type: "number", placeholder: "S", default: 1, help: "seconds of warm-up before each run" },
    rounds: { type: "number", placeholder: "N", default: 7, min: 1, integer: true, help: "interleaved rounds" },
    "wire-rounds": {
      type: "number",
      placeholder: "N",
      default: 3,
      min: 1,
      integer: true,
      help: "rounds of gRPC against HTTP JSON and binary",
    },
    "tracing-rounds": {
      type: "number",
      placeholder: "N",
      default: 4,
      min: 0,
      integer: true,
      help: "rounds (each the four in order and back) of the pool with tracing off, at 1%, at 100% and under unsampled parents (0 skips them)",
    },
    out: OUT_FLAG,
    "own-stack": { type: "boolean", help: "also the pool's own stack without batching and without inference" },
    model: MODEL_FLAG,
    pin: {
      type: "string",
      choices: ["on", "off"],
      default: "on",
      help: "every server on core 0, wrk on core 1 (taskset; unpinned where absent)",
    },
  },
});
const {
  connections,
  duration: durationS,
  warmup: warmupS,
  rounds,
  "wire-rounds": wireRounds,
  "tracing-rounds": tracingRounds,
} = args;
holdBenchLock();
const TARGETS = { aOverB: 1.5, aOverC: 0.85, p99Ms: 10 };

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PLAIN = fileURLToPath(new URL("./plain-servers.ts", import.meta.url));
const OWN_STACK = fileURLToPath(new URL("./regional-baselines.ts", import.meta.url));
/** The model the requests name (`--model`, default digits), its held-out rows and its input's name and width. */
const target = probeTarget(join(ROOT, "models"), args.model);
const { model, heldout } = target;
const input = target.config.inputs[0]!;
/** Results of another model than digits go to their own files. */
const suffix = model === "digits" ? "" : `-${model}`;

if (!haveWrk()) {
  process.stderr.write("bench:regional needs wrk (Debian: sudo apt-get install wrk)\n");
  process.exit(1);
}

type Key = "a" | "b" | "c" | "d" | "e" | "f";
interface Server {
  key: Key;
  name: string;
  /** Whether it is the pool's own stack, which reports its batches in /metrics. */
  pool: boolean;
  start(): Promise<RegionalPool>;
}
// The own-stack ceiling answers uniform probabilities of the model's shape; the plain servers read the config.
const common = { region: "bench", workers: 1, env: { EDGECASCADE_BENCH_CLASSES: String(target.config.labels.length) } };
const plainArgs = (mode: string) => ["--mode", mode, "--model", model];
const SERVERS: Server[] = [
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
  ...(args["own-stack"]
    ? ([
        {
          key: "d",
          name: "pool's own stack, one session.run per request",
          pool: true,
          start: () => startRegionalPool({ ...common, script: OWN_STACK, extraArgs: ["--mode", "naive"] }),
        },
        {
          key: "e",
          name: "pool's own stack, no inference",
          pool: true,
          start: () => startRegionalPool({ ...common, script: OWN_STACK, extraArgs: ["--mode", "ceiling"] }),
        },
      ] satisfies Server[])
    : []),
];

/** The order of a round's measurements (reversed every other round). */
const MEASURE_ORDER: readonly Key[] = ["a", "c", "f", "b", "d", "e"];

interface Measurement extends WrkResult {
  /** Rows per session.run during the measurement, from the pool's own metrics; null for the plain servers. */
  meanBatch: number | null;
  /** Server CPU per answered request, in user space (JS, onnxruntime) and in the kernel (mostly socket I/O). */
  userUsPerRequest: number;
  kernelUsPerRequest: number;
  /** Cores that other work on the machine kept busy during the measurement (other-load.ts); null off Linux. */
  otherCores: number | null;
}

async function batchCounts(url: string): Promise<{ rows: number; executions: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`) && l.includes(`model="${model}"`))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return { rows: sum("edgecascade_inference_rows_total"), executions: sum("edgecascade_inference_executions_total") };
}

/** One measurement of a running server: a short warm-up, then wrk, its CPU and (the pool's) batches. */
async function measure(server: Server, pool: RegionalPool, script: string): Promise<Measurement> {
  const url = `${pool.url}/v1/classify`;
  await wrk(url, { connections, seconds: warmupS, script });
  const before = server.pool ? await batchCounts(pool.url) : undefined;
  const cpuBefore = cpuSeconds(pool.pid);
  // The server, this process and (once waited for) the wrk run: everything else on the machine is other work.
  const loadBefore = readLoad([pool.pid, process.pid]);
  const result = await wrk(url, { connections, seconds: durationS, script });
  const loadAfter = readLoad([pool.pid, process.pid]);
  const cpuAfter = cpuSeconds(pool.pid);
  const after = server.pool ? await batchCounts(pool.url) : undefined;
  const executions = before && after ? after.executions - before.executions : 0;
  return {
    ...result,
    meanBatch: before && after && executions > 0 ? (after.rows - before.rows) / executions : null,
    userUsPerRequest: ((cpuAfter.user - cpuBefore.user) * 1e6) / result.requests,
    kernelUsPerRequest: ((cpuAfter.kernel - cpuBefore.kernel) * 1e6) / result.requests,
    otherCores: loadBefore && loadAfter ? otherCores(loadBefore, loadAfter, result.seconds) : null,
  };
}

/** Mean size of an answer, body and header block (status line and headers as received), in bytes. */
interface AnswerBytes {
  body: number;
  headers: number;
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

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

const requests: WrkRequest[] = heldout.rows.map((r) => ({
  method: "POST",
  path: "/v1/classify",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model, inputs: r.input }),
}));
const dir = mkdtempSync(join(tmpdir(), "edgecascade-bench-"));
const script = join(dir, "rows.lua");
writeFileSync(script, wrkScript(requests));
const tasksetHere = haveTaskset();
// What this process may run on before any pinning: the cores to split, and what to go back to on failure.
const allowed = (tasksetHere && affinity(process.pid)) || "";
let plan = corePlan(args.pin === "on", parseCpuList(allowed), tasksetHere);
/**
 * Put a started server on the server's core (its children and threads go with it) and this process, hence every
 * wrk it starts from now on, on the generator's. Half a plan is worse than none: if taskset refuses, everything
 * goes back on every allowed core and the report says why.
 */
const placed: number[] = [];
function place(pid: number): void {
  if (!plan.pinned) return;
  placed.push(pid);
  if (pinProcess(pid, plan.server) && pinProcess(process.pid, plan.generator)) return;
  for (const p of [...placed, process.pid]) pinProcess(p, allowed);
  plan = { pinned: false, why: "taskset could not pin every process" };
}
const raw = Object.fromEntries(SERVERS.map((s) => [s.key, [] as Measurement[]])) as Record<Key, Measurement[]>;
const bytes = {} as Record<Key, AnswerBytes>;
const startedAt = Date.now();
// Every server runs for the whole comparison (an idle one takes no CPU), so that a round (one short
// measurement of each) spans seconds, not minutes: load from elsewhere on a shared machine then hits a
// round's servers alike, and the rounds' own ratios cancel it out.
const running: RegionalPool[] = [];
try {
  for (const server of SERVERS) running.push(await server.start());
  for (const pool of running) place(pool.pid);
  process.stdout.write(
    plan.pinned
      ? `pinned: every server on core ${plan.server}, wrk on core ${plan.generator}\n`
      : `not pinned: ${plan.why}\n`,
  );
  for (const [i, server] of SERVERS.entries()) {
    bytes[server.key] = await answerBytes(
      `${running[i]!.url}/v1/classify`,
      requests.map((r) => r.body as string),
    );
  }
  for (let round = 1; round <= rounds; round++) {
    // (a) next to (c), and every other round in reverse order: a neighbour's burst of a few seconds then hits the
    // pool and its baseline most alike, and no server always runs right after the same one.
    const order = [...SERVERS.entries()].sort(
      ([, x], [, y]) => MEASURE_ORDER.indexOf(x.key) - MEASURE_ORDER.indexOf(y.key),
    );
    if (round % 2 === 0) order.reverse();
    for (const [i, server] of order) {
      const m = await measure(server, running[i]!, script);
      raw[server.key].push(m);
      process.stdout.write(
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
/** v2 infer bodies of `batch` held-out rows each (windows over the 360 rows), JSON or binary in and out. */
function inferRequests(batch: number, binary: boolean): WrkRequest[] {
  const out: WrkRequest[] = [];
  for (let from = 0; from + batch <= heldout.rows.length && out.length < 64; from += batch) {
    const rows = heldout.rows.slice(from, from + batch).map((r) => r.input);
    if (!binary) {
      out.push({
        method: "POST",
        path: `/v2/models/${model}/infer`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          inputs: [{ name: input.name, shape: [batch, rows[0]!.length], datatype: "FP32", data: rows }],
        }),
      });
      continue;
    }
    const values = new Uint8Array(Float32Array.from(rows.flat()).buffer);
    const json = new TextEncoder().encode(
      JSON.stringify({
        parameters: { binary_data_output: true },
        inputs: [
          {
            name: input.name,
            shape: [batch, rows[0]!.length],
            datatype: "FP32",
            parameters: { binary_data_size: values.length },
          },
        ],
      }),
    );
    const body = new Uint8Array(json.length + values.length);
    body.set(json);
    body.set(values, json.length);
    out.push({
      method: "POST",
      path: `/v2/models/${model}/infer`,
      headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(json.length) },
      body,
    });
  }
  return out;
}

interface WireLoad {
  key: string;
  name: string;
  batch: number;
  script: string;
}
interface WireMeasurement extends WrkResult {
  rowsPerSec: number;
  cpuUsPerRow: number;
}
const wireDir = mkdtempSync(join(tmpdir(), "edgecascade-bench-"));
const WIRE: WireLoad[] = [1, 64].flatMap((batch) =>
  [false, true].map((binary) => {
    const key = `${binary ? "binary" : "json"}${batch}`;
    const file = join(wireDir, `${key}.lua`);
    writeFileSync(file, wrkScript(inferRequests(batch, binary)));
    return {
      key,
      name: `${binary ? "binary" : "JSON"}, ${batch} row${batch > 1 ? "s" : ""} per request`,
      batch,
      script: file,
    };
  }),
);
const wireRaw = Object.fromEntries(WIRE.map((w) => [w.key, [] as WireMeasurement[]]));
const wirePool = await startRegionalPool(common);
place(wirePool.pid);
try {
  for (let round = 1; round <= wireRounds; round++) {
    for (const load of WIRE) {
      const url = `${wirePool.url}/v2/models/${model}/infer`;
      await wrk(url, { connections, seconds: warmupS, script: load.script });
      const before = cpuSeconds(wirePool.pid);
      const result = await wrk(url, { connections, seconds: durationS, script: load.script });
      const after = cpuSeconds(wirePool.pid);
      const rows = result.requests * load.batch;
      const m = {
        ...result,
        rowsPerSec: result.reqPerSec * load.batch,
        cpuUsPerRow: ((after.user + after.kernel - before.user - before.kernel) * 1e6) / rows,
      };
      wireRaw[load.key]!.push(m);
      process.stdout.write(
        `wire round ${round} ${load.key.padEnd(8)} ${m.reqPerSec.toFixed(0)} req/s  ${m.rowsPerSec.toFixed(0)} rows/s  ` +
          `p50 ${m.p50Ms.toFixed(2)}  p99 ${m.p99Ms.toFixed(2)} ms  errors ${m.errors}  non-2xx ${m.non2xx}  ` +
          `server CPU/row ${m.cpuUsPerRow.toFixed(1)} µs\n`,
      );
    }
  }
} finally {
  await wirePool.stop();
  rmSync(wireDir, { recursive: true, force: true });
}
const wire = Object.fromEntries(
  WIRE.map((w) => {
    const ms = wireRaw[w.key]!;
    const med = (pick: (m: WireMeasurement) => number) => median(ms.map(pick));
    return [
      w.key,
      {
        name: w.name,
        rowsPerRequest: w.batch,
        reqPerSec: Math.round(med((m) => m.reqPerSec)),
        rowsPerSec: Math.round(med((m) => m.rowsPerSec)),
        p50Ms: round2(med((m) => m.p50Ms)),
        p99Ms: round2(med((m) => m.p99Ms)),
        cpuUsPerRow: Math.round(med((m) => m.cpuUsPerRow) * 10) / 10,
        errors: ms.reduce((n, m) => n + m.errors + m.non2xx, 0),
      },
    ];
  }),
);
const grpcWire = await measureGrpcWire({
  pool: common,
  model,
  inputName: input.name,
  rows: heldout.rows.map((r) => r.input),
  concurrency: connections,
  durationS,
  warmupS,
  rounds: wireRounds,
  log: (line) => process.stdout.write(line),
  onStarted: place,
});
const tracing =
  tracingRounds > 0
    ? await measureTracingCost({
        pool: common,
        requests,
        connections,
        durationS,
        warmupS,
        rounds: tracingRounds,
        log: (line) => process.stdout.write(line),
        onStarted: place,
      })
    : undefined;
/** Binary over JSON, per batch size: median of the rounds' own ratios of rows/s. */
const binaryOverJson = Object.fromEntries(
  [1, 64].map((batch) => [
    batch,
    round2(median(wireRaw[`binary${batch}`]!.map((b, i) => b.rowsPerSec / wireRaw[`json${batch}`]![i]!.rowsPerSec))),
  ]),
);

const tookS = Math.round((Date.now() - startedAt) / 1000);

interface Summary {
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
const met = {
  aOverB: ratios.aOverB >= TARGETS.aOverB,
  aOverC: ratios.aOverC >= TARGETS.aOverC,
  p99: summary.a.p99Ms <= TARGETS.p99Ms,
  noErrors:
    SERVERS.every((s) => summary[s.key].errors === 0) &&
    [...Object.values(wire), ...Object.values(grpcWire.loads), ...Object.values(tracing?.loads ?? {})].every(
      (w) => w.errors === 0,
    ),
};

const flags = [
  ...(suffix ? ["--model", model] : []),
  ...(args["own-stack"] ? ["--own-stack"] : []),
  ...(args.pin === "off" ? ["--pin", "off"] : []),
  ...(tracingRounds !== 4 ? ["--tracing-rounds", String(tracingRounds)] : []),
];
const command = `npm run bench:regional${flags.length ? ` -- ${flags.join(" ")}` : ""}`;
const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const others = SERVERS.flatMap((s) => raw[s.key].map((m) => m.otherCores)).filter((x) => x !== null);
/** Other work on the machine during the comparison's measurements, in cores: median and most. */
const otherWork = others.length ? { median: round2(median(others)), max: round2(Math.max(...others)) } : null;
const report = {
  command,
  date: new Date().toISOString(),
  tookS,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version, loadavgAfter: loadavg },
  load: {
    generator: "wrk -t1 (closed loop)",
    connections,
    durationS,
    warmupS,
    rounds,
    request: `POST /v1/classify, model ${model}, one held-out row per request, ${heldout.rows.length} rows in turn`,
  },
  pinning: plan,
  otherWork,
  servers: summary,
  ratios,
  cpuPerRequest,
  targets: TARGETS,
  met,
  wire: { rounds: wireRounds, loads: wire, binaryOverJson, raw: wireRaw },
  grpc: { generator: grpcWire.generator, loads: grpcWire.loads, grpcOver: grpcWire.grpcOver, raw: grpcWire.raw },
  tracing: tracing
    ? { rounds: tracingRounds, loads: tracing.loads, exported: tracing.exported, raw: tracing.raw }
    : null,
  rounds: raw,
  ratiosPerRound: perRound.map((r) => ({
    aOverB: round2(r.aOverB),
    aOverC: round2(r.aOverC),
    fOverC: round2(r.fOverC),
    otherCores: r.otherCores === null ? null : round2(r.otherCores),
  })),
};

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
const yes = (ok: boolean) => (ok ? "yes" : "**no**");
const markdown = `# Regional pool benchmark

\`${command}\` (runs under \`flock /tmp/edgecascade-bench.lock\`; took ${tookS} s) — ${report.date},
${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}, load average after the run ${loadavg}.
Load: ${report.load.generator}, ${connections} connections, ${durationS} s per measurement after ${warmupS} s of
warm-up, ${rounds} rounds interleaving the servers; medians. Each server is one process on 127.0.0.1, started
once and running for the whole comparison (idle while another is measured). ${
  plan.pinned
    ? `Cores: every server pinned to core ${plan.server}, wrk (and the gRPC section's Node generator) to core ${plan.generator} (\`taskset\`, \`--pin\`), as in production, where a pool does not share its cores with its clients.`
    : `Cores: not pinned (${plan.why}): the servers share the cores with the generator.`
} ${report.load.request}. (b) and (c) are the baselines a user would write: plain
\`node:http\`, nothing of the pool's stack (\`scripts/benchmarks/plain-servers.ts\`); they set Content-Length, as a careful
user's server does. (f) is a reference, not a baseline: plain \`node:http\` that runs the model once per
\`setImmediate\` batch and answers the pool's body with only Content-Type and Content-Length (no validation,
limits, metrics or Server-Timing). f/c shows how close to (c) any server that runs the model per batch gets on
this machine; a/c against its target stays the measure of the pool. A load average above 2 means other work shared the machine's ${report.machine.cpus} cores during the
run: it moves a round's servers together, which is why the ratios are taken within each round, but it does not
hit them alike (a server that answers in batches loses more to being descheduled). ${
  otherWork
    ? `Other work on the machine during the measurements (its busy CPU minus the server's, wrk's and this process's, \`other-load.ts\`): median ${otherWork.median} cores, at most ${otherWork.max}.`
    : ""
} Each round measures (a), (c), (f), (b) back to back, every other round in reverse order.

${table}

| ratio | measured (median of the rounds' own ratios) | target | met |
|---|---:|---:|---|
| a/b (the pool vs a plain server running the model per request) | ${ratios.aOverB} | ≥ ${TARGETS.aOverB} | ${yes(met.aOverB)} |
| a/c (the pool vs a plain server that only parses and answers) | ${ratios.aOverC} | ≥ ${TARGETS.aOverC} | ${yes(met.aOverC)} |
| f/c (reference: a minimal batching server vs the same; not a target) | ${ratios.fOverC} | – | – |
| a p99 at that load | ${summary.a.p99Ms} ms | ≤ ${TARGETS.p99Ms} ms | ${yes(met.p99)} |

Server CPU per request is the server process's user and kernel time during the measurement divided by the
requests answered: the per-request server spends ${cpuPerRequest.bOverA}× the pool's, the constant server
${cpuPerRequest.cOverA}×, the minimal batching server ${cpuPerRequest.fOverA}×. It moves less than req/s when something else runs on the machine (contention still
inflates it). Most of the kernel part, for every server alike, is the socket write of each answer.
Answer bytes: the mean size of the answer to each held-out row sent once, its body and its status line and
headers as received. (c) answers ten copies of \`0.1\`, shorter than any model's scores; (a) writes each FP32
score as the shortest decimal that reads back to the same float32 (\`protocol/float32-decimal.ts\`).

## Wire formats: JSON against binary tensor data

The pool alone, POST /v2/models/${model}/infer, ${wireRounds} rounds of the four loads; binary is Triton's binary tensor
data extension (\`Inference-Header-Content-Length\`, rows as little-endian FP32 after the JSON part, the answer's
probabilities returned the same way with \`binary_data_output\`).

| load | req/s | rows/s | p50 ms | p99 ms | server CPU per row | errors |
|---|---:|---:|---:|---:|---:|---:|
${Object.values(wire)
  .map(
    (w) =>
      `| ${w.name} | ${w.reqPerSec} | ${w.rowsPerSec} | ${w.p50Ms} | ${w.p99Ms} | ${w.cpuUsPerRow} µs | ${w.errors} |`,
  )
  .join("\n")}

Binary over JSON, rows/s (median of the rounds' own ratios): ${binaryOverJson[1]}× at 1 row per request,
${binaryOverJson[64]}× at 64.

${grpcWire.markdown}
${tracing?.markdown ?? ""}
Per round: \`bench/regional${suffix}.json\` (\`rounds\`, \`ratiosPerRound\`, \`wire.raw\`, \`grpc.raw\`).
`;
const outDir = resolve(ROOT, args.out);
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `regional${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(outDir, `regional${suffix}.md`), markdown);
process.stdout.write(
  `\nper round: ${perRound.map((r) => `a/c ${r.aOverC.toFixed(2)} (other work ${r.otherCores?.toFixed(2) ?? "-"})`).join(", ")}\n` +
    `\n${table}\n\na/b ${ratios.aOverB}  a/c ${ratios.aOverC}  f/c ${ratios.fOverC} (reference)  (targets ≥ ${TARGETS.aOverB}, ≥ ${TARGETS.aOverC}, p99 ≤ ${TARGETS.p99Ms} ms)\n` +
    `binary/JSON rows/s: ${binaryOverJson[1]}× at 1 row, ${binaryOverJson[64]}× at 64 rows\n` +
    `gRPC/JSON rows/s: ${grpcWire.grpcOver.json[1]}× at 1 row, ${grpcWire.grpcOver.json[64]}× at 64; ` +
    `gRPC/binary: ${grpcWire.grpcOver.binary[1]}×, ${grpcWire.grpcOver.binary[64]}×; took ${tookS} s\n` +
    (tracing
      ? `tracing over off: 1% ${tracing.loads.ratio1.overOff}×, 100% ${tracing.loads.ratio100.overOff}×, unsampled parents ${tracing.loads.unsampledParent.overOff}×\n`
      : ""),
);
process.exitCode = met.noErrors ? 0 : 1;
