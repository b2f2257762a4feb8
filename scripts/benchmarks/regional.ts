import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { processFlags } from "../../tools/cli/command.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "./core-pinning.ts";
import { measureGrpcWire } from "./grpc-wire.ts";
import { holdBenchLock } from "./lock.ts";
import { comparePools } from "./pool-comparison.ts";
import { measureTracingCost } from "./tracing-cost.ts";
import { measureWireFormats } from "./wire-formats.ts";
import { haveWrk, type WrkRequest } from "./wrk.ts";

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
 * what tracing costs: the pool with tracing off, at 1%, at 100% and under unsampled parents, loaded together
 * (scripts/benchmarks/tracing-cost.ts, `--tracing-rounds` windows, 0 skips it; `--tracing-only` runs it alone, into
 * `regional-tracing.md` and `.json` beside the full run's files).
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
      default: 12,
      min: 0,
      integer: true,
      help: "measured windows (after 5 of warm-up) of the pools with tracing off, at 1%, at 100% and under unsampled parents, loaded together (0 skips them)",
    },
    "tracing-only": {
      type: "boolean",
      help: "only the tracing section, written to regional-tracing.md and .json (the full run's files untouched)",
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

// The own-stack ceiling answers uniform probabilities of the model's shape; the plain servers read the config.
const common = { region: "bench", workers: 1, env: { EDGECASCADE_BENCH_CLASSES: String(target.config.labels.length) } };
const requests: WrkRequest[] = heldout.rows.map((r) => ({
  method: "POST",
  path: "/v1/classify",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model, inputs: r.input }),
}));
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
const log = (line: string) => process.stdout.write(line);
const startedAt = Date.now();
const round2 = (x: number) => Math.round(x * 100) / 100;
const loadOf = () => ({
  generator: "wrk -t1 (closed loop)",
  connections,
  durationS,
  warmupS,
  rounds,
  request: `POST /v1/classify, model ${model}, one held-out row per request, ${heldout.rows.length} rows in turn`,
});
const machineOf = (loadavgAfter: string) => ({
  cpus: cpus().length,
  model: cpus()[0]?.model ?? "unknown",
  node: process.version,
  loadavgAfter,
});
const pinningText = () =>
  plan.pinned
    ? `Cores: every server pinned to core ${plan.server}, wrk (and the gRPC section's Node generator) to core ${plan.generator} (\`taskset\`, \`--pin\`), as in production, where a pool does not share its cores with its clients.`
    : `Cores: not pinned (${plan.why}): the servers share the cores with the generator.`;
const tracingOptions = {
  pool: common,
  requests,
  connections,
  durationS,
  windows: tracingRounds,
  warmupWindows: 5,
  log,
  onStarted: place,
};
const outDir = resolve(ROOT, args.out);
const tracingLine = (t: Awaited<ReturnType<typeof measureTracingCost>>) =>
  `tracing, CPU per request over off: 1% ${t.loads.ratio1.cpuOverOff}×, 100% ${t.loads.ratio100.cpuOverOff}×, unsampled parents ${t.loads.unsampledParent.cpuOverOff}×\n`;

if (args["tracing-only"]) {
  if (tracingRounds === 0) {
    process.stderr.write("bench:regional: --tracing-only needs --tracing-rounds above 0\n");
    process.exit(2);
  }
  const tracing = await measureTracingCost(tracingOptions);
  const tookS = Math.round((Date.now() - startedAt) / 1000);
  const flags = [
    ...(suffix ? ["--model", model] : []),
    ...(args.pin === "off" ? ["--pin", "off"] : []),
    "--tracing-only",
    ...(tracingRounds !== 12 ? ["--tracing-rounds", String(tracingRounds)] : []),
  ];
  const command = `npm run bench:regional -- ${flags.join(" ")}`;
  const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const { rounds: _comparisonRounds, ...load } = loadOf();
  const report = {
    command,
    date: new Date().toISOString(),
    tookS,
    machine: machineOf(loadavg),
    load,
    pinning: plan,
    tracing: { windows: tracingRounds, loads: tracing.loads, exported: tracing.exported, raw: tracing.raw },
  };
  const markdown = `# Regional pool benchmark: tracing cost alone

\`${command}\` (runs under \`flock /tmp/edgecascade-bench.lock\`; took ${tookS} s) — ${report.date},
${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}, load average after the run ${loadavg}.
The tracing section of \`bench/regional${suffix}.md\`, run alone. Load: ${load.generator}, ${connections} connections
over the four pools; ${load.request}. ${pinningText()}

${tracing.markdown}
Per window: \`bench/regional-tracing${suffix}.json\` (\`tracing.raw\`).
`;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `regional-tracing${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, `regional-tracing${suffix}.md`), markdown);
  log(`\n${tracingLine(tracing)}took ${tookS} s\n`);
  process.exit(Object.values(tracing.loads).every((w) => w.errors === 0) ? 0 : 1);
}

const { summary, raw, perRound, ratios, cpuPerRequest, otherWork, table } = await comparePools({
  pool: common,
  model,
  requests,
  ownStack: args["own-stack"] === true,
  connections,
  durationS,
  warmupS,
  rounds,
  log,
  onStarted: place,
  onAllStarted: () =>
    log(
      plan.pinned
        ? `pinned: every server on core ${plan.server}, wrk on core ${plan.generator}\n`
        : `not pinned: ${plan.why}\n`,
    ),
});
const wire = await measureWireFormats({
  pool: common,
  model,
  inputName: input.name,
  rows: heldout.rows.map((r) => r.input),
  connections,
  durationS,
  warmupS,
  rounds: wireRounds,
  log,
  onStarted: place,
});
const grpcWire = await measureGrpcWire({
  pool: common,
  model,
  inputName: input.name,
  rows: heldout.rows.map((r) => r.input),
  concurrency: connections,
  durationS,
  warmupS,
  rounds: wireRounds,
  log,
  onStarted: place,
});
const tracing = tracingRounds > 0 ? await measureTracingCost(tracingOptions) : undefined;
const tookS = Math.round((Date.now() - startedAt) / 1000);

const met = {
  aOverB: ratios.aOverB >= TARGETS.aOverB,
  aOverC: ratios.aOverC >= TARGETS.aOverC,
  p99: summary.a.p99Ms <= TARGETS.p99Ms,
  noErrors:
    Object.values(summary).every((s) => s.errors === 0) &&
    [...Object.values(wire.loads), ...Object.values(grpcWire.loads), ...Object.values(tracing?.loads ?? {})].every(
      (w) => w.errors === 0,
    ),
};

const flags = [
  ...(suffix ? ["--model", model] : []),
  ...(args["own-stack"] ? ["--own-stack"] : []),
  ...(args.pin === "off" ? ["--pin", "off"] : []),
  ...(tracingRounds !== 12 ? ["--tracing-rounds", String(tracingRounds)] : []),
];
const command = `npm run bench:regional${flags.length ? ` -- ${flags.join(" ")}` : ""}`;
const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const report = {
  command,
  date: new Date().toISOString(),
  tookS,
  machine: machineOf(loadavg),
  load: loadOf(),
  pinning: plan,
  otherWork,
  servers: summary,
  ratios,
  cpuPerRequest,
  targets: TARGETS,
  met,
  wire: { rounds: wireRounds, loads: wire.loads, binaryOverJson: wire.binaryOverJson, raw: wire.raw },
  grpc: { generator: grpcWire.generator, loads: grpcWire.loads, grpcOver: grpcWire.grpcOver, raw: grpcWire.raw },
  tracing: tracing
    ? { windows: tracingRounds, loads: tracing.loads, exported: tracing.exported, raw: tracing.raw }
    : null,
  rounds: raw,
  ratiosPerRound: perRound.map((r) => ({
    aOverB: round2(r.aOverB),
    aOverC: round2(r.aOverC),
    fOverC: round2(r.fOverC),
    otherCores: r.otherCores === null ? null : round2(r.otherCores),
  })),
};

const yes = (ok: boolean) => (ok ? "yes" : "**no**");
const markdown = `# Regional pool benchmark

\`${command}\` (runs under \`flock /tmp/edgecascade-bench.lock\`; took ${tookS} s) — ${report.date},
${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}, load average after the run ${loadavg}.
Load: ${report.load.generator}, ${connections} connections, ${durationS} s per measurement after ${warmupS} s of
warm-up, ${rounds} rounds interleaving the servers; medians. Each server is one process on 127.0.0.1, started
once and running for the whole comparison (idle while another is measured). ${pinningText()} ${report.load.request}. (b) and (c) are the baselines a user would write: plain
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

${wire.markdown}
${grpcWire.markdown}
${tracing?.markdown ?? ""}
Per round: \`bench/regional${suffix}.json\` (\`rounds\`, \`ratiosPerRound\`, \`wire.raw\`, \`grpc.raw\`).
`;
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `regional${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(outDir, `regional${suffix}.md`), markdown);
process.stdout.write(
  `\nper round: ${perRound.map((r) => `a/c ${r.aOverC.toFixed(2)} (other work ${r.otherCores?.toFixed(2) ?? "-"})`).join(", ")}\n` +
    `\n${table}\n\na/b ${ratios.aOverB}  a/c ${ratios.aOverC}  f/c ${ratios.fOverC} (reference)  (targets ≥ ${TARGETS.aOverB}, ≥ ${TARGETS.aOverC}, p99 ≤ ${TARGETS.p99Ms} ms)\n` +
    `binary/JSON rows/s: ${wire.binaryOverJson[1]}× at 1 row, ${wire.binaryOverJson[64]}× at 64 rows\n` +
    `gRPC/JSON rows/s: ${grpcWire.grpcOver.json[1]}× at 1 row, ${grpcWire.grpcOver.json[64]}× at 64; ` +
    `gRPC/binary: ${grpcWire.grpcOver.binary[1]}×, ${grpcWire.grpcOver.binary[64]}×; took ${tookS} s\n` +
    (tracing ? tracingLine(tracing) : ""),
);
process.exitCode = met.noErrors ? 0 : 1;
