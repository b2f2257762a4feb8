import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { probeTarget } from "../probe/target.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";

/**
 * `npm run bench:regional`: on loopback, with one load generator (wrk, one thread, the same connections and
 * request mix for all), one server process at a time:
 *   (a) the regional pool (`--workers 1`, dynamic batching, defaults otherwise),
 *   (b) naive: the same stack doing one session.run per request, no batching,
 *   (c) ceiling: the same HTTP stack with inference removed.
 * Rounds interleave a, b, c so that drift on a shared machine hits all three; the report gives medians.
 * wrk rather than autocannon: in C it leaves more of the 2 cores to the server, so the servers, not the
 * generator, set the pace; its latency histogram is in microseconds. wrk is closed-loop: its latencies are
 * those at the throughput it reached (each connection waits for its answer).
 * Run it alone: `flock /tmp/edgecascade-bench.lock npm run bench:regional`.
 */
const { values: args } = parseArgs({
  options: {
    connections: { type: "string", default: "16" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "3" },
    rounds: { type: "string", default: "5" },
    out: { type: "string", default: "bench" },
    model: { type: "string", default: "digits" },
  },
});
const connections = Number(args.connections);
const durationS = Number(args.duration);
const warmupS = Number(args.warmup);
const rounds = Number(args.rounds);
const TARGETS = { aOverB: 1.5, aOverC: 0.8, p99Ms: 10 };

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BASELINES = fileURLToPath(new URL("./regional-baselines.ts", import.meta.url));
/** The model the requests name (`--model`, default digits) and its held-out rows. */
const target = probeTarget(join(ROOT, "models"), args.model!);
const { model, heldout } = target;
/** Results of another model than digits go to their own files. */
const suffix = model === "digits" ? "" : `-${model}`;

if (spawnSync("wrk", ["--version"]).error) {
  process.stderr.write("bench:regional needs wrk (Debian: sudo apt-get install wrk)\n");
  process.exit(1);
}

/**
 * wrk script: every held-out row as its own single-row /v1/classify request, in turn; at the end one line
 * with requests, seconds, p50/p95/p99 (ms), errors and non-2xx answers.
 */
function wrkScript(): string {
  const bodies = heldout.rows.map((r) => `  [[${JSON.stringify({ model, inputs: r.input })}]],`);
  return `local bodies = {\n${bodies.join("\n")}\n}
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/classify", { ["content-type"] = "application/json" }, bodies[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %.6f %.3f %.3f %.3f %d %d\\n", summary.requests, summary.duration / 1e6,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
`;
}

interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
  /** Rows per session.run during the measurement, from the pool's own metrics; null for the ceiling. */
  meanBatch: number | null;
  /** Server CPU per answered request, in user space (JS, onnxruntime) and in the kernel (mostly socket writes). */
  userUsPerRequest: number;
  kernelUsPerRequest: number;
}

/** User and kernel CPU seconds a process has used (Linux /proc; clock ticks of 10 ms). */
function cpuSeconds(pid: number): { user: number; kernel: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
  return { user: Number(fields[11]) / 100, kernel: Number(fields[12]) / 100 };
}

function wrk(url: string, seconds: number, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "5s", "-s", script, url]);
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out}`))));
  });
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

interface Server {
  key: "a" | "b" | "c";
  name: string;
  start(): Promise<RegionalPool>;
}
// The ceiling baseline answers uniform probabilities of the model's shape.
const common = { region: "bench", workers: 1, env: { EDGECASCADE_BENCH_CLASSES: String(target.config.labels.length) } };
const SERVERS: Server[] = [
  { key: "a", name: "regional pool (dynamic batching)", start: () => startRegionalPool(common) },
  {
    key: "b",
    name: "naive: one session.run per request",
    start: () => startRegionalPool({ ...common, script: BASELINES, extraArgs: ["--mode", "naive"] }),
  },
  {
    key: "c",
    name: "ceiling: same HTTP stack, no inference",
    start: () => startRegionalPool({ ...common, script: BASELINES, extraArgs: ["--mode", "ceiling"] }),
  },
];

async function measure(server: Server, script: string): Promise<Measurement> {
  const pool = await server.start();
  try {
    await wrk(pool.url, warmupS, script);
    const before = await batchCounts(pool.url);
    const cpuBefore = cpuSeconds(pool.pid);
    const out = await wrk(pool.url, durationS, script);
    const cpuAfter = cpuSeconds(pool.pid);
    const after = await batchCounts(pool.url);
    const line = out.split("\n").find((l) => l.startsWith("RESULT "));
    if (!line) throw new Error(`no RESULT line from wrk:\n${out}`);
    const [requests, seconds, p50, p95, p99, errors, non2xx] = line.split(" ").slice(1).map(Number) as number[];
    const executions = after.executions - before.executions;
    return {
      reqPerSec: requests! / seconds!,
      p50Ms: p50!,
      p95Ms: p95!,
      p99Ms: p99!,
      errors: errors!,
      non2xx: non2xx!,
      meanBatch: executions > 0 ? (after.rows - before.rows) / executions : null,
      userUsPerRequest: ((cpuAfter.user - cpuBefore.user) * 1e6) / requests!,
      kernelUsPerRequest: ((cpuAfter.kernel - cpuBefore.kernel) * 1e6) / requests!,
    };
  } finally {
    await pool.stop();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

const dir = mkdtempSync(join(tmpdir(), "edgecascade-bench-"));
const script = join(dir, "rows.lua");
writeFileSync(script, wrkScript());
const raw: Record<Server["key"], Measurement[]> = { a: [], b: [], c: [] };
try {
  for (let round = 1; round <= rounds; round++) {
    for (const server of SERVERS) {
      const m = await measure(server, script);
      raw[server.key].push(m);
      process.stdout.write(
        `round ${round} (${server.key}) ${m.reqPerSec.toFixed(0)} req/s  p50 ${m.p50Ms.toFixed(2)}  ` +
          `p95 ${m.p95Ms.toFixed(2)}  p99 ${m.p99Ms.toFixed(2)} ms  errors ${m.errors}  non-2xx ${m.non2xx}  ` +
          `rows/run ${m.meanBatch?.toFixed(1) ?? "-"}  server CPU/request ${m.userUsPerRequest.toFixed(0)} µs user + ` +
          `${m.kernelUsPerRequest.toFixed(0)} µs kernel\n`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

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
  };
}
const summary = { a: summarize(SERVERS[0]!), b: summarize(SERVERS[1]!), c: summarize(SERVERS[2]!) };

/**
 * Ratios are the median of each round's own ratio: a, b and c of one round ran minutes apart at most, so a
 * neighbour's load that comes and goes moves all three together and cancels out.
 */
const perRound = raw.a.map((a, i) => ({
  aOverB: a.reqPerSec / raw.b[i]!.reqPerSec,
  aOverC: a.reqPerSec / raw.c[i]!.reqPerSec,
}));
const ratios = {
  aOverB: round2(median(perRound.map((r) => r.aOverB))),
  aOverC: round2(median(perRound.map((r) => r.aOverC))),
};
/** Server CPU per request relative to the pool's: what batching saves, barely moved by other load on the box. */
const cpu = (k: Server["key"]) => summary[k].userUsPerRequest + summary[k].kernelUsPerRequest;
const cpuPerRequest = { bOverA: round2(cpu("b") / cpu("a")), cOverA: round2(cpu("c") / cpu("a")) };
/** The same ratios from the medians of req/s, for comparison. */
const ratiosOfMedians = {
  aOverB: round2(summary.a.reqPerSec / summary.b.reqPerSec),
  aOverC: round2(summary.a.reqPerSec / summary.c.reqPerSec),
};
const met = {
  aOverB: ratios.aOverB >= TARGETS.aOverB,
  aOverC: ratios.aOverC >= TARGETS.aOverC,
  p99: summary.a.p99Ms <= TARGETS.p99Ms,
  noErrors: summary.a.errors + summary.b.errors + summary.c.errors === 0,
};

const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const report = {
  command: `flock /tmp/edgecascade-bench.lock npm run bench:regional${suffix ? ` -- --model ${model}` : ""}`,
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version, loadavgAfter: loadavg },
  load: {
    generator: "wrk -t1 (closed loop)",
    connections,
    durationS,
    warmupS,
    rounds,
    request: `POST /v1/classify, model ${model}, one held-out row per request, ${heldout.rows.length} rows in turn`,
  },
  servers: summary,
  ratios,
  ratiosOfMedians,
  cpuPerRequest,
  targets: TARGETS,
  met,
  rounds: raw,
  ratiosPerRound: perRound.map((r) => ({ aOverB: round2(r.aOverB), aOverC: round2(r.aOverC) })),
};

const table = [
  "| server | req/s | p50 ms | p95 ms | p99 ms | rows per run | server CPU per request (user + kernel) | errors |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
  ...SERVERS.map((s) => {
    const r = summary[s.key];
    const cpu = `${r.userUsPerRequest} + ${r.kernelUsPerRequest} µs`;
    return `| (${s.key}) ${r.name} | ${r.reqPerSec} | ${r.p50Ms} | ${r.p95Ms} | ${r.p99Ms} | ${r.meanBatch ?? "–"} | ${cpu} | ${r.errors} |`;
  }),
].join("\n");
const markdown = `# Regional pool benchmark

\`${report.command}\` — ${report.date}, ${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node},
load average after the run ${loadavg}. Load: ${report.load.generator}, ${connections} connections, ${durationS} s per
measurement after ${warmupS} s of warm-up, ${rounds} rounds interleaving a, b, c; medians (ratios: median of the
rounds' own ratios, so load from elsewhere that comes and goes cancels out). Each server is one process
(\`--workers 1\`) on 127.0.0.1 and shares the 2 cores with the generator. ${report.load.request}.

${table}

| ratio | measured | target | met |
|---|---:|---:|---|
| a/b (batching vs one run per request) | ${ratios.aOverB} (of medians: ${ratiosOfMedians.aOverB}) | ≥ ${TARGETS.aOverB} | ${met.aOverB ? "yes" : "**no**"} |
| a/c (pool vs HTTP ceiling) | ${ratios.aOverC} (of medians: ${ratiosOfMedians.aOverC}) | ≥ ${TARGETS.aOverC} | ${met.aOverC ? "yes" : "**no**"} |
| a p99 at that load | ${summary.a.p99Ms} ms | ≤ ${TARGETS.p99Ms} ms | ${met.p99 ? "yes" : "**no**"} |

Server CPU per request is the server process's user and kernel time during the measurement divided by the
requests answered: the naive server spends ${cpuPerRequest.bOverA}× the pool's, the ceiling ${cpuPerRequest.cOverA}×. It moves less than
req/s when something else runs on the machine (contention still inflates it); most of the kernel part is the socket
write of each answer. When a/c comes out near or above 1, the generator (one wrk thread on the same 2 cores) rather
than the server set the pace of a and c alike; their CPU per request is then the comparison that means something.

Per round: \`bench/regional.json\` (\`rounds\`, \`ratiosPerRound\`).
`;
const outDir = join(ROOT, args.out);
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `regional${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(outDir, `regional${suffix}.md`), markdown);
process.stdout.write(
  `\n${table}\n\na/b ${ratios.aOverB}  a/c ${ratios.aOverC}  (targets ≥ ${TARGETS.aOverB}, ≥ ${TARGETS.aOverC}, p99 ≤ ${TARGETS.p99Ms} ms)\n`,
);
process.exitCode = met.noErrors ? 0 : 1;
