import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { request } from "undici";
import { DEGRADED_HEADER } from "../../protocol/headers.ts";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { processFlags } from "../../tools/cli/command.ts";
import { MODELS_DIR, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { readRepository } from "../../tools/edge-bundle/edge-models.ts";
import { childPids } from "../../tools/local-stack/processes.ts";
import { LoadClient, openLoop } from "../../tools/probe/load.ts";
import { headerValue } from "../../tools/probe/load-response.ts";
import { OUT_FLAG } from "../run-flags.ts";
import { type EdgeWorker, startEdgeWorker } from "../stack/edge-worker.ts";
import { copiedFrom, repositoryOfCopies } from "../stack/model-copies.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";
import { watchGc } from "../validate/gc-pauses.ts";
import { rssFromStatus } from "../validate/rss.ts";
import { runInfo } from "../validate/run-info.ts";
import { zipfSampler } from "../validate/traffic.ts";
import { bundleSize, checkStartup } from "./bundle-figures.ts";
import { affinity, type CorePlan, corePlan, haveTaskset, parseCpuList, pinProcess } from "./core-pinning.ts";
import { holdBenchLock } from "./lock.ts";
import {
  type IsolateRegions,
  majorGcLine,
  manyModelsMarkdown,
  type RunGc,
  type RunWorkerdGc,
} from "./many-models-report.ts";
import { type Answered, median, popularityOrder, type RunFigures, runFigures } from "./many-models-traffic.ts";
import { listeningPid } from "./process-cpu.ts";
import { type MemorySample, sampleMemory, sampleMemoryEvery } from "./stack-memory.ts";
import { WorkerdGcLog, withTraceGc } from "./workerd-gc.ts";

/**
 * `npm run bench:many-models -- --models 1000`: a thousand models (copies of the samples under distinct names,
 * each with its edge variant) through the local stack (one regional pool, `--workers 1` as `npm start` runs
 * them, and the Worker in workerd), against the same stack serving the two samples, in interleaved rounds of
 * open-loop traffic at the same rate: requests pick a model by Zipf-like popularity, and a held-out row of its
 * sample. Reports the hot models' p50/p99 beside the two-model run's, the edge share, failures, evictions, each
 * tier's memory over time against its budget, the first request of a cold model at each tier, the Worker
 * bundle's size and start-up CPU with that many edge variants, and a pod of two workers' memory with models
 * placed by hashing against every worker loading its own. Results: bench/many-models.json and .md.
 */
const { values: args } = processFlags({
  name: "bench:many-models",
  usage: "npm run bench:many-models -- [options]",
  flags: {
    models: { type: "number", placeholder: "N", default: 1000, min: 2, max: 5000, integer: true, help: "models" },
    rate: { type: "number", placeholder: "RPS", default: 150, min: 1, help: "requests per second of each run" },
    duration: { type: "number", placeholder: "S", default: 30, min: 1, help: "seconds of each run" },
    warmup: { type: "number", placeholder: "S", default: 15, min: 0, help: "seconds of traffic before the rounds" },
    "lead-in": {
      type: "number",
      placeholder: "S",
      default: 5,
      min: 0,
      help: "seconds of unmeasured traffic before each run (a stack idle while the other was measured collects its garbage once traffic resumes)",
    },
    rounds: { type: "number", placeholder: "N", default: 5, min: 1, integer: true, help: "runs of each stack" },
    hot: { type: "number", placeholder: "N", default: 10, min: 1, integer: true, help: "the most popular models" },
    "pool-memory-mb": {
      type: "number",
      placeholder: "MB",
      default: 512,
      min: 1,
      integer: true,
      help: "the pools' --model-memory-mb: room for the models the edge forwards (the 2-sample stack's pool is the same)",
    },
    "zipf-s": { type: "number", placeholder: "S", default: 1, min: 0, help: "Zipf exponent of model popularity" },
    "edge-replacements": {
      type: "number",
      placeholder: "PER_S",
      min: 0,
      help: "EDGE_SESSION_REPLACEMENTS_PER_SECOND of both Workers (default: the Worker's own)",
    },
    "placement-models": {
      type: "number",
      placeholder: "N",
      default: 200,
      min: 0,
      integer: true,
      help: "models of the --workers 2 placement comparison (0 skips it)",
    },
    pin: {
      type: "string",
      choices: ["on", "off"],
      default: "on",
      help: "both Workers' workerd on one core, the pools and the load generator on another (taskset; unpinned where absent)",
    },
    out: OUT_FLAG,
  },
});
holdBenchLock();

const SECRET = "bench-many-models";
/** The generator's GC pauses listed per run (all are counted). */
const GC_PAUSE_SHOWN_MS = 10;
/** Models no traffic asks for: their first requests are measured cold, one tier at a time. */
const COLD = 6;
const INSPECTOR_PORT = 9241;
const REGION = { name: "us", latitude: 39.04, longitude: -77.49, continent: "NA" };

interface Stack {
  label: string;
  pool: RegionalPool;
  edge: EdgeWorker;
  /** Model names in popularity order (rank 0 the hottest). */
  order: string[];
  rows: Map<string, number[][]>;
  readyS: { pool: number; edge: number };
  /** Its workerd's collections (`--trace-gc-nvp`): the major ones stall every isolate on its thread. */
  gc: WorkerdGcLog;
}

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

async function startStack(label: string, modelsDir: string, names: string[], inspectorPort?: number): Promise<Stack> {
  let t = performance.now();
  const pool = await startRegionalPool({
    region: REGION.name,
    modelsDir,
    env: { REGIONAL_SHARED_SECRET: SECRET },
    extraArgs: ["--model-memory-mb", String(args["pool-memory-mb"])],
    readyTimeoutMs: 300_000,
  });
  const poolS = seconds(t);
  t = performance.now();
  const gc = new WorkerdGcLog();
  const edge = await startEdgeWorker({
    modelsDir,
    memoryPlatform: true,
    // Requests go straight to the Worker's socket, as on Cloudflare: through Miniflare's entry Worker they would
    // leave its isolate ~2 KB each as well, whose major collections stall the one thread too (workerd-gc.ts).
    directSocket: true,
    // One generator stands for many clients: the per-client limit (wrangler.toml's 6,000 a minute, 100 req/s) would
    // refuse part of the 150 req/s whenever a warm-up and a round fall in one minute's window (593 429s once).
    rateLimit: false,
    ...(inspectorPort ? { inspectorPort } : {}),
    // Its GC trace is kept; of the Worker's own lines only warnings and errors are shown (a thousand models log
    // an eviction a second).
    onLog: (level, message) => {
      if (!gc.read(message) && (level === "warn" || level === "error")) console.warn(message);
    },
    vars: {
      REGIONS: JSON.stringify([{ ...REGION, url: pool.url }]),
      REGIONAL_SHARED_SECRET: SECRET,
      // Every request takes the model path: no answer comes from the response cache.
      CACHE_ENTRIES: "0",
      LOCAL_CACHE_ONLY: "true",
      ...(args["edge-replacements"] === undefined
        ? {}
        : { EDGE_SESSION_REPLACEMENTS_PER_SECOND: String(args["edge-replacements"]) }),
    },
  });
  await edge.dispatchFetch(`${edge.url}/v2/health/ready`);
  const rows = new Map<string, number[][]>();
  for (const m of readRepository(MODELS_DIR))
    rows.set(
      m.config.name,
      m.samples.map((s) => s.input),
    );
  return {
    label,
    pool,
    edge,
    order: popularityOrder(names, seededRandom(label.length)),
    rows,
    readyS: { pool: poolS, edge: seconds(t) },
    gc,
  };
}

const body = (stack: Stack, model: string, i: number, extra: Record<string, unknown> = {}) => {
  const rows = stack.rows.get(copiedFrom(model))!;
  return JSON.stringify({ model, inputs: rows[i % rows.length], ...extra });
};

/**
 * An open-loop run of Zipf-popular models on `stack`; every answer's rank, latency, status and tier, and this
 * process's (the generator's) GC pauses of at least GC_PAUSE_SHOWN_MS while it ran: a pause delays its sends and
 * its reading of answers, so every request in flight then looks slower.
 */
async function run(
  stack: Stack,
  durationS: number,
  seed: number,
): Promise<Answered[] & { gc?: RunGc; workerdGc?: RunWorkerdGc }> {
  const rankOf = zipfSampler(stack.order.length, args["zipf-s"], seededRandom(seed));
  const ranks: number[] = [];
  const answers: Answered[] = [];
  const client = new LoadClient(stack.edge.url, { connections: 32 });
  const startedAt = performance.now();
  const gc = watchGc();
  try {
    await openLoop({
      origin: stack.edge.url,
      client,
      rate: args.rate,
      durationS,
      next: (i) => {
        const rank = rankOf();
        ranks[i] = rank;
        return {
          path: "/v1/classify",
          headers: { "content-type": "application/json" },
          body: body(stack, stack.order[rank]!, i),
        };
      },
      onResponse: (response, _request, i) =>
        answers.push({
          rank: ranks[i]!,
          latencyMs: response.latencyMs,
          status: response.status,
          servedBy: headerValue(response.headers, "x-served-by") ?? "",
          degraded: headerValue(response.headers, DEGRADED_HEADER),
          atS: (performance.now() - startedAt) / 1000,
        }),
    });
  } finally {
    await client.close();
  }
  const { pauses, spans } = gc.stop();
  const held = stack.gc.between(startedAt, performance.now());
  const workerdGc = { majors: held.majors, heldBytesPerRequest: Math.round(held.heldGrowthBytes / answers.length) };
  const shown = spans.filter((p) => p.endMs - p.startMs >= GC_PAUSE_SHOWN_MS && p.startMs >= startedAt);
  return Object.assign(answers, {
    workerdGc,
    gc: {
      ...pauses,
      long: shown.map((p) => ({
        atS: Math.round((p.startMs - startedAt) / 10) / 100,
        ms: Math.round((p.endMs - p.startMs) * 10) / 10,
      })),
    },
  });
}

/** A model's first request at a tier (signed as the edge signs its forwards, for a pool): its latency and who answered. */
async function coldRequest(url: string, payload: string, signed = false) {
  const signature = signed
    ? await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body: payload })
    : {};
  const t = performance.now();
  const res = await request(`${url}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json", ...signature },
    body: payload,
  });
  const answer = (await res.body.json()) as { servedBy?: string };
  return {
    ms: Math.round((performance.now() - t) * 100) / 100,
    status: res.statusCode,
    servedBy: answer.servedBy ?? "",
  };
}

/** A pod of two workers serving `n` models loaded on demand: its workers' memory before and after every model was asked for. */
async function placementRun(modelsDir: string, names: string[], flags: string[]) {
  const pool = await startRegionalPool({
    region: "eu",
    workers: 2,
    modelsDir,
    extraArgs: flags,
    readyTimeoutMs: 300_000,
  });
  try {
    const workers = () => childPids(pool.pid);
    const rssOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (sampleRss(pid) ?? 0), 0);
    const atReady = rssOf(workers());
    let failed = 0;
    for (const name of names) {
      for (let i = 0; i < 4; i++) {
        // A connection of its own: the primary hands connections to the workers in turn.
        const res = await request(`${pool.url}/v1/classify`, {
          method: "POST",
          reset: true,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: name, inputs: readRows(name)[i] }),
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) {
          failed++;
          console.warn(`  ${name}: ${res.statusCode} ${text}`);
        }
      }
    }
    const metrics = await (await fetch(`${pool.url}/metrics`)).text();
    const loaded = Number(/^edgecascade_models_loaded (\d+)/m.exec(metrics)?.[1] ?? Number.NaN);
    return {
      flags: flags.join(" "),
      workers: 2,
      models: names.length,
      loaded,
      failed,
      rssAtReadyBytes: atReady,
      rssAfterBytes: rssOf(workers()),
    };
  } finally {
    await pool.stop();
  }
}

const sampleRows = new Map(readRepository(MODELS_DIR).map((m) => [m.config.name, m.samples.map((s) => s.input)]));
const readRows = (name: string) => sampleRows.get(copiedFrom(name))!;
function sampleRss(pid: number): number | undefined {
  try {
    return rssFromStatus(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Both Workers' workerd on one core, the pools and this process (the load generator) on the other, as bench:edge
 * does. In production a region's pool runs on other machines; here a 1,000-model pool's on-demand loads (20-60 ms
 * of CPU each, several a second) would otherwise take turns with the Worker's one thread on the same two cores,
 * and the hot models' edge answers would wait for work the edge never does. Half a plan is worse than none: if
 * taskset refuses any process, everything goes back on every allowed core and the report says why.
 */
function pinStacks(stacks: Stack[]): CorePlan {
  const tasksetHere = haveTaskset();
  const allowed = (tasksetHere && affinity(process.pid)) || "";
  const plan = corePlan(args.pin === "on", parseCpuList(allowed), tasksetHere);
  if (!plan.pinned) return plan;
  const workerds = stacks.map((s) => listeningPid(s.edge.url));
  const generators = [...stacks.flatMap((s) => [s.pool.pid, ...childPids(s.pool.pid)]), process.pid];
  const pin = (server: string, generator: string) =>
    [
      ...workerds.map((pid) => pid !== undefined && pinProcess(pid, server)),
      ...generators.map((pid) => pinProcess(pid, generator)),
    ].every(Boolean);
  if (pin(plan.server, plan.generator)) return plan;
  pin(allowed, allowed);
  return { pinned: false, why: "taskset could not pin every process (a workerd's pid unknown, or refused)" };
}

async function main(): Promise<void> {
  const info = runInfo(`npm run bench:many-models -- --models ${args.models}`);
  const copies = repositoryOfCopies(args.models, { link: true });
  const stacks: Stack[] = [];
  try {
    console.log(`bundles: ${args.models} edge variants and the 2 samples...`);
    const bundles = {
      samples: await bundleSize(MODELS_DIR, join(ROOT, ".build/edge-bench-samples")),
      many: await bundleSize(copies.dir, join(ROOT, ".build/edge-bench-many")),
    };
    const startup = { samples: [] as number[], many: [] as number[] };
    for (let i = 0; i < 2; i++) {
      startup.samples.push((await checkStartup(MODELS_DIR, join(ROOT, ".build/edge-bench-samples"))).activeMs);
      startup.many.push((await checkStartup(copies.dir, join(ROOT, ".build/edge-bench-many"))).activeMs);
    }
    console.log(`  startup ms: samples ${startup.samples.join(", ")}; many ${startup.many.join(", ")}`);

    // Miniflare hands these to workerd: each stack's major collections are read from its own trace (workerd-gc.ts).
    process.env.MINIFLARE_WORKERD_V8_FLAGS = withTraceGc(process.env.MINIFLARE_WORKERD_V8_FLAGS);
    console.log("starting both stacks...");
    const samples = await startStack("samples", MODELS_DIR, ["digits", "breast-cancer"]);
    stacks.push(samples);
    const many = await startStack("many", copies.dir, copies.names.slice(0, -COLD), INSPECTOR_PORT);
    stacks.push(many);
    const targets = {
      poolUrl: many.pool.url,
      poolPids: () => [many.pool.pid],
      edgeUrl: many.edge.url,
      workerdPid: listeningPid(many.edge.url)!,
      inspectorPort: INSPECTOR_PORT,
    };
    const pinning = pinStacks(stacks);
    console.log(
      pinning.pinned
        ? `pinned: workerd on core ${pinning.server}, the pools and the load generator on core ${pinning.generator}`
        : `not pinned: ${pinning.why}`,
    );
    const atReady = await sampleMemory(targets, 0);
    const samplesPoolRss = sampleRss(samples.pool.pid) ?? 0;

    console.log("cold first requests...");
    const cold = copies.names.slice(-COLD);
    const coldFigures = {
      regional: [
        await coldRequest(many.pool.url, body(many, cold[0]!, 0), true),
        await coldRequest(many.pool.url, body(many, cold[1]!, 0), true),
      ],
      edgeAuto: [
        await coldRequest(many.edge.url, body(many, cold[2]!, 0)),
        await coldRequest(many.edge.url, body(many, cold[3]!, 0)),
      ],
      edgeOnly: [
        await coldRequest(many.edge.url, body(many, cold[4]!, 0, { parameters: { cascade: "edge" } })),
        await coldRequest(many.edge.url, body(many, cold[5]!, 0, { parameters: { cascade: "edge" } })),
      ],
    };

    if (args.warmup > 0) {
      console.log(`warm-up: ${args.warmup} s each...`);
      for (const stack of stacks) await run(stack, args.warmup, 1);
    }
    const sampler = sampleMemoryEvery(targets, 1000);
    const rounds: { samples: RunFigures; many: RunFigures }[] = [];
    const every = { samples: [] as Answered[], many: [] as Answered[] };
    /**
     * Unmeasured traffic before a run, seeded apart so the run's own is the same with or without it. A Worker idle
     * for the other stack's run kept its garbage: workerd then made a major collection (75-143 ms) within the first
     * 3 s of traffic in about half of the 1,000-model runs, which steady traffic does not do.
     */
    const leadIn = async (stack: Stack, seed: number) => {
      if (args["lead-in"] === 0) return;
      const failed = (await run(stack, args["lead-in"], 1000 + seed)).filter((a) => a.status !== 200).length;
      if (failed > 0) console.warn(`  lead-in of ${stack.label}: ${failed} requests failed`);
    };
    for (let r = 0; r < args.rounds; r++) {
      await leadIn(samples, 100 + r);
      const samplesRun = await run(samples, args.duration, 100 + r);
      const s = { ...runFigures(samplesRun, args.hot), generatorGc: samplesRun.gc, workerdGc: samplesRun.workerdGc };
      await leadIn(many, 200 + r);
      const manyRun = await run(many, args.duration, 200 + r);
      const m = { ...runFigures(manyRun, args.hot), generatorGc: manyRun.gc, workerdGc: manyRun.workerdGc };
      rounds.push({ samples: s, many: m });
      every.samples.push(...samplesRun);
      every.many.push(...manyRun);
      console.log(
        `round ${r + 1}: hot p99 ${m.hot.p99Ms} ms vs ${s.hot.p99Ms} ms (2 models); edge share ${m.edgeShare} vs ${s.edgeShare}; ` +
          `failed ${m.failed + s.failed}; workerd major GCs ${majorGcLine(m.workerdGc)} vs ${majorGcLine(s.workerdGc)}; ` +
          `held per request ${m.workerdGc?.heldBytesPerRequest} vs ${s.workerdGc?.heldBytesPerRequest} B`,
      );
    }
    const memory: MemorySample[] = await sampler.stop();
    // What the Worker's isolate made of the region over the runs: why rows were not forwarded (tooFar, timedOut).
    const regionsOf = async (stack: Stack) =>
      (
        (await (await stack.edge.dispatchFetch(`${stack.edge.url}/status/regions`)).json()) as {
          isolate?: IsolateRegions;
        }
      ).isolate;
    const edgeRegions = { samples: await regionsOf(samples), many: await regionsOf(many) };
    console.log(JSON.stringify(edgeRegions).slice(0, 3000));

    let placement: Awaited<ReturnType<typeof placementRun>>[] = [];
    if (args["placement-models"] > 0) {
      console.log(`placement: ${args["placement-models"]} models, --workers 2...`);
      const few = repositoryOfCopies(args["placement-models"], { link: true });
      try {
        const onDemand = ["--load-policy", "on-demand", "--model-memory-mb", "1024"];
        placement = [
          await placementRun(few.dir, few.names, [...onDemand, "--model-placement", "hashed"]),
          await placementRun(few.dir, few.names, [...onDemand, "--model-placement", "every-worker"]),
          await placementRun(few.dir, few.names, ["--load-policy", "all"]),
        ];
      } finally {
        few.remove();
      }
    }

    const hotRatio = rounds.map((r) => r.many.hot.p99Ms / r.samples.hot.p99Ms);
    // Every round's hot requests together: a p99 over thousands of them, which one stall cannot set alone.
    const pooled = { many: runFigures(every.many, args.hot).hot, samples: runFigures(every.samples, args.hot).hot };
    const results = {
      ...info,
      options: { ...args, cold: COLD },
      pinning,
      bundles,
      startup: { samplesMs: startup.samples, manyMs: startup.many, limitMs: 1000 },
      ready: { samples: samples.readyS, many: many.readyS },
      memoryAtReady: { many: atReady, samplesPoolRssBytes: samplesPoolRss },
      cold: coldFigures,
      rounds,
      hotP99Ratio: {
        perRound: hotRatio.map((x) => Math.round(x * 1000) / 1000),
        median: Math.round(median(hotRatio) * 1000) / 1000,
      },
      hotPooled: {
        many: { requests: pooled.many.requests, p50Ms: pooled.many.p50Ms, p99Ms: pooled.many.p99Ms },
        samples: { requests: pooled.samples.requests, p50Ms: pooled.samples.p50Ms, p99Ms: pooled.samples.p99Ms },
        p99Ratio: Math.round((pooled.many.p99Ms / pooled.samples.p99Ms) * 1000) / 1000,
      },
      memory,
      edgeRegions,
      placement,
    };
    const out = resolve(ROOT, args.out);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "many-models.json"), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(out, "many-models.md"), manyModelsMarkdown(results));
    console.log(`wrote ${join(out, "many-models.md")}`);
  } finally {
    await Promise.allSettled(stacks.flatMap((s) => [s.edge.dispose(), s.pool.stop()]));
    copies.remove();
  }
}

await main();
