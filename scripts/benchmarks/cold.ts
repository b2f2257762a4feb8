import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { processFlags } from "../../tools/cli/command.ts";
import { generateModels, MODELS_DIR, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { OUT_FLAG } from "../run-flags.ts";
import { type EdgeWorker, startEdgeWorker } from "../stack/edge-worker.ts";
import { startRegionalPool } from "../stack/regional-pool.ts";
import { startHelloWorker } from "./hello.ts";
import { holdBenchLock } from "./lock.ts";
import { cpuMs, listeningPid } from "./process-cpu.ts";

/**
 * `npm run bench:cold`: what the first requests of a new isolate cost (docs/edge.md, *Cold isolates*). Each
 * round starts a fresh edge Worker in workerd (Miniflare, a new process: a new isolate) with a real regional
 * pool on loopback, and sends, one after another, the first request of each kind:
 *   edge-row      a digits row its edge variant is sure of, not cached (warm: answered at the edge)
 *   forward       a digits row it is unsure of (warm and cold: forwarded)
 *   second-model  a breast-cancer row its edge variant is sure of (that model's first request)
 * then each kind again with `--warm` fresh rows. A second fresh Worker with no region in reach takes an
 * edge-row first: that request has to wait for the session. For every request: latency (client, loopback) and
 * workerd's CPU, from its threads' schedstat, until the answer and until the isolate is idle again (what
 * waitUntil ran: the session created off the request path). Also workerd's CPU until ready against a
 * hello-world Worker's, and `wrangler check startup` of the bundle (the platform's limit is 1 s).
 * Runs under the benchmark lock. Results: bench/cold.json, bench/cold.md.
 */
const { values: args } = processFlags({
  name: "bench:cold",
  usage: "npm run bench:cold -- [options]",
  flags: {
    rounds: { type: "number", placeholder: "N", default: 5, min: 1, integer: true, help: "fresh Workers per kind" },
    warm: { type: "number", placeholder: "N", default: 20, min: 1, integer: true, help: "warm requests per kind" },
    "settle-ms": {
      type: "number",
      placeholder: "MS",
      default: 400,
      min: 1,
      integer: true,
      help: "wait for the isolate to be idle after an answer",
    },
    out: OUT_FLAG,
  },
});
const { rounds, warm: warmCount, "settle-ms": settleMs } = args;
holdBenchLock();

type Kind = "edge-row" | "forward" | "second-model";
const KINDS: Kind[] = ["edge-row", "forward", "second-model"];

/** Rows by kind: those the edge variant answers and those it forwards, per model. */
function rowsOf(model: string) {
  const target = probeTarget(MODELS_DIR, model);
  if (!target.edge) throw new Error(`bench:cold: ${model} has no edge variant`);
  const { threshold, model: edgeModel } = target.edge;
  const sure = target.heldout.rows.filter((r) => edgeAnswers(r, threshold, edgeModel));
  const unsure = target.heldout.rows.filter((r) => !edgeAnswers(r, threshold, edgeModel));
  return { sure, unsure };
}
const digits = rowsOf("digits");
const cancer = rowsOf("breast-cancer");
const needed = 1 + warmCount;
if (digits.sure.length < 2 * needed || digits.unsure.length < needed || cancer.sure.length < needed) {
  throw new Error(`bench:cold: the held-out sets have too few rows for --warm ${warmCount}`);
}

interface Sample {
  kind: Kind | "edge-row-no-region";
  cold: boolean;
  latencyMs: number;
  /** workerd CPU from send to the answer's last byte. */
  cpuToAnswerMs: number;
  /** workerd CPU from send until the isolate was idle again (`--settle-ms` after the answer): waitUntil's work too. */
  cpuTotalMs: number;
  servedBy: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(
  worker: EdgeWorker,
  pid: number,
  model: string,
  row: HeldoutRow,
  kind: Sample["kind"],
  cold: boolean,
): Promise<Sample> {
  const body = JSON.stringify({ model, inputs: row.input });
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const response = await fetch(`${worker.url}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  await response.arrayBuffer();
  const latencyMs = performance.now() - t0;
  const cpu1 = cpuMs(pid);
  if (response.status !== 200) throw new Error(`${kind}: status ${response.status}`);
  // Cold requests leave work in waitUntil (the session); warm ones are measured back to back, with a short gap.
  await sleep(cold ? settleMs : 20);
  const cpu2 = cpuMs(pid);
  return {
    kind,
    cold,
    latencyMs,
    cpuToAnswerMs: cpu1 - cpu0,
    cpuTotalMs: cpu2 - cpu0,
    servedBy: response.headers.get("x-served-by") ?? "none",
  };
}

const KIND_MODEL: Record<Kind, string> = { "edge-row": "digits", forward: "digits", "second-model": "breast-cancer" };

/** Rows for round `r`: a different first row of each kind every round (a fresh isolate has no cache anyway). */
function rowsFor(kind: Kind | "edge-row-no-region", r: number): HeldoutRow[] {
  const pick = (rows: HeldoutRow[], offset: number) =>
    Array.from({ length: needed }, (_, i) => rows[(offset + r * 7 + i) % rows.length]!);
  switch (kind) {
    case "edge-row":
      return pick(digits.sure, 0);
    case "edge-row-no-region":
      return pick(digits.sure, needed);
    case "forward":
      return pick(digits.unsure, 0);
    case "second-model":
      return pick(cancer.sure, 0);
  }
}

/** workerd's CPU (ms, all threads) from spawn until the Worker answered its readiness check. */
const readyCpu = (url: string) => {
  const pid = listeningPid(url);
  if (pid === undefined) throw new Error(`no pid listening on ${url} (ss from iproute2 is needed)`);
  return { pid, cpu: cpuMs(pid) };
};

async function helloStartupCpu(): Promise<number> {
  const hello = await startHelloWorker();
  try {
    return readyCpu(hello.url).cpu;
  } finally {
    await hello.dispose();
  }
}

/** `wrangler check startup` of the bundle as deployed (its models module generated first): the profile's active ms. */
async function checkStartup(): Promise<{ activeMs: number; output: string }> {
  const config = await generateModels(MODELS_DIR, join(ROOT, ".build/edge"), "deployed");
  const output = await new Promise<string>((done, fail) =>
    execFile(
      join(ROOT, "node_modules/.bin/wrangler"),
      ["check", "startup", `--args=${config.join(" ")}`, "--outfile", join(ROOT, ".build/worker-startup.cpuprofile")],
      { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" } },
      (err, stdout, stderr) =>
        err ? fail(new Error(`wrangler check startup: ${stderr || err.message}`)) : done(stdout),
    ),
  );
  const active = /Active: ([\d.]+) ms/.exec(output)?.[1];
  if (!active) throw new Error(`wrangler check startup printed no "Active:" line:\n${output}`);
  return { activeMs: Number(active), output: output.slice(output.indexOf("Bundle:")).trim() };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const r2 = (x: number) => Math.round(x * 100) / 100;

async function main() {
  const load = loadavg();
  console.log("wrangler check startup...");
  const startup = await checkStartup();
  console.log(`  active ${startup.activeMs} ms`);
  const secret = randomBytes(16).toString("hex");
  const pool = await startRegionalPool({ region: "bench", workers: 1, env: { REGIONAL_SHARED_SECRET: secret } });
  const samples: Sample[] = [];
  const startupCpu: { edge: number; hello: number }[] = [];
  const vars = {
    REGIONAL_SHARED_SECRET: secret,
    LOCAL_CACHE_ONLY: "true",
    // Generous: the first forward of a new isolate includes the connection to the pool; it is measured, not judged.
    SLO_BUDGET_MS: "1000",
  };
  try {
    for (let r = 0; r < rounds; r++) {
      const hello = await helloStartupCpu();
      const edge = await startEdgeWorker({
        vars: {
          ...vars,
          REGIONS: JSON.stringify([{ name: "bench", url: pool.url, latitude: 39.04, longitude: -77.49 }]),
        },
        rateLimit: false,
      });
      const alone = await startEdgeWorker({ vars: { ...vars, REGIONS: "[]" }, rateLimit: false });
      try {
        const { pid, cpu } = readyCpu(edge.url);
        startupCpu.push({ edge: cpu, hello });
        const rows = Object.fromEntries(KINDS.map((k) => [k, rowsFor(k, r)])) as Record<Kind, HeldoutRow[]>;
        for (const kind of KINDS) samples.push(await send(edge, pid, KIND_MODEL[kind], rows[kind][0]!, kind, true));
        for (let i = 1; i < needed; i++) {
          for (const kind of KINDS) samples.push(await send(edge, pid, KIND_MODEL[kind], rows[kind][i]!, kind, false));
        }
        const lonely = readyCpu(alone.url).pid;
        const own = rowsFor("edge-row-no-region", r);
        samples.push(await send(alone, lonely, "digits", own[0]!, "edge-row-no-region", true));
        for (let i = 1; i < needed; i++)
          samples.push(await send(alone, lonely, "digits", own[i]!, "edge-row-no-region", false));
        const line = (k: Sample["kind"]) => {
          const c = samples.filter((s) => s.kind === k && s.cold).at(-1)!;
          return `${k} ${c.servedBy} ${c.latencyMs.toFixed(1)} ms, cpu ${c.cpuToAnswerMs.toFixed(1)}/${c.cpuTotalMs.toFixed(1)} ms`;
        };
        console.log(`round ${r + 1}: ${[...KINDS, "edge-row-no-region" as const].map(line).join(" | ")}`);
      } finally {
        await Promise.all([edge.dispose(), alone.dispose()]);
      }
    }
  } finally {
    await pool.stop();
  }

  const kinds = [...KINDS, "edge-row-no-region"] as const;
  const summary = Object.fromEntries(
    kinds.map((kind) => {
      const of = (cold: boolean) => samples.filter((s) => s.kind === kind && s.cold === cold);
      const stats = (xs: Sample[]) => ({
        latencyMs: r2(median(xs.map((s) => s.latencyMs))),
        cpuToAnswerMs: r2(median(xs.map((s) => s.cpuToAnswerMs))),
        cpuTotalMs: r2(median(xs.map((s) => s.cpuTotalMs))),
        servedBy: [...new Set(xs.map((s) => s.servedBy))].join(", "),
      });
      return [kind, { first: stats(of(true)), warm: stats(of(false)) }];
    }),
  );
  const sessionCpuMs = {
    /** The cold edge-row's work after its answer: the session created in waitUntil (and nothing else runs then). */
    offPath: r2(
      median(samples.filter((s) => s.kind === "edge-row" && s.cold).map((s) => s.cpuTotalMs - s.cpuToAnswerMs)),
    ),
    /** The request that waited for its session, minus the same request warm. */
    waited: r2(summary["edge-row-no-region"]!.first.cpuTotalMs - summary["edge-row-no-region"]!.warm.cpuTotalMs),
  };
  const report = {
    command: `npm run bench:cold -- ${process.argv.slice(2).join(" ")}`.trim(),
    date: new Date().toISOString(),
    machine: {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: availableParallelism(),
      loadAverage: load.map((x) => r2(x)),
      node: process.version,
      git: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT }).toString().trim(),
    },
    settings: { rounds, warm: warmCount, settleMs },
    wranglerCheckStartup: startup,
    startupCpuMs: {
      edge: r2(median(startupCpu.map((s) => s.edge))),
      hello: r2(median(startupCpu.map((s) => s.hello))),
      rounds: startupCpu.map((s) => ({ edge: r2(s.edge), hello: r2(s.hello) })),
    },
    sessionCpuMs,
    kinds: summary,
    samples: samples.map((s) => ({
      ...s,
      latencyMs: r2(s.latencyMs),
      cpuToAnswerMs: r2(s.cpuToAnswerMs),
      cpuTotalMs: r2(s.cpuTotalMs),
    })),
  };
  const out = resolve(ROOT, args.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "cold.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, "cold.md"), markdown(report));
  console.log(`wrote ${join(args.out, "cold.md")}`);
}

const WHAT: Record<string, string> = {
  "edge-row": "digits row the edge variant is sure of (a cache miss the edge answers when warm)",
  forward: "digits row it is unsure of (forwarded)",
  "second-model": "breast-cancer row its edge variant is sure of (the second model's first request)",
  "edge-row-no-region": "digits row the edge is sure of, no region in reach (waits for the session)",
};

function markdown(report: {
  command: string;
  date: string;
  machine: Record<string, unknown>;
  settings: { rounds: number; warm: number; settleMs: number };
  wranglerCheckStartup: { activeMs: number; output: string };
  startupCpuMs: { edge: number; hello: number };
  sessionCpuMs: { offPath: number; waited: number };
  kinds: Record<string, { first: Record<string, number | string>; warm: Record<string, number | string> }>;
}): string {
  const m = report.machine;
  const rows = Object.entries(report.kinds).map(
    ([kind, { first, warm }]) =>
      `| ${WHAT[kind]} | ${first.servedBy} | ${first.latencyMs} | ${first.cpuToAnswerMs} | ${first.cpuTotalMs} | ${warm.servedBy} | ${warm.latencyMs} | ${warm.cpuToAnswerMs} |`,
  );
  return `# Cold isolates: the first requests of a new Worker

\`${report.command}\` (under the benchmark lock), ${report.date}, git ${m.git}. Machine: ${m.cpu}, ${m.cores} cores,
shared with other work (load average ${(m.loadAverage as number[]).join(" / ")} at start), Node ${m.node}.

Each of ${report.settings.rounds} rounds starts a fresh edge Worker (Miniflare, a new workerd process: a new
isolate) beside a real regional pool on loopback, and sends the first request of each kind one after another,
then ${report.settings.warm} more of each kind with fresh rows (warm). A second fresh Worker without regions takes a
first request that must wait for its session. Latency is the client's, on loopback; CPU is workerd's (all
threads, from /proc/<pid>/task/*/schedstat), from send to the answer, and until ${report.settings.settleMs} ms after
it (the work waitUntil ran: a session created off the request path). Medians of the rounds.

| first request | served by | latency ms | CPU to answer ms | CPU incl. waitUntil ms | warm: served by | warm latency ms | warm CPU ms |
|---|---|---:|---:|---:|---|---:|---:|
${rows.join("\n")}

**Session creation** (verify the bundled bytes, create the ORT session, check the direct runner against
\`session.run\`): **${report.sessionCpuMs.offPath} ms** of CPU off the request path after a forwarded first
request; **${report.sessionCpuMs.waited} ms** more than a warm request for the request that waited for it (target ≤ 100 ms).

**Start-up.** workerd's CPU from spawn to ready: ${report.startupCpuMs.edge} ms for the edge Worker (its 14 MB ORT
wasm compiled, modules evaluated, ORT's runtime initialised at module scope), ${report.startupCpuMs.hello} ms for a
hello-world Worker. \`wrangler check startup\` (the platform's start-up limit is 1 s):

\`\`\`
${report.wranglerCheckStartup.output}
\`\`\`
`;
}

await main();
