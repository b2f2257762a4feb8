import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { argmax } from "../../protocol/heldout.ts";
import { processFlags } from "../../tools/cli/command.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { closedLoop, LoadClient, openLoop } from "../../tools/probe/load.ts";
import { headerValue, type LoadResponse } from "../../tools/probe/load-response.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import { startEdgeWorker } from "../stack/edge-worker.ts";
import { startRegionalPool } from "../stack/regional-pool.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "./core-pinning.ts";
import { type ForwardOverhead, measureForwardOverhead } from "./forward-overhead.ts";
import { startHelloWorker } from "./hello.ts";
import { holdBenchLock } from "./lock.ts";
import { machineTicks, stealShare } from "./machine-steal.ts";
import { median, type PairedRatio, pairedRatio } from "./paired-ratio.ts";
import { cpuMs, listeningPid } from "./process-cpu.ts";
import { haveWrk } from "./wrk.ts";

/**
 * `npm run bench:edge`: the edge Worker in local workerd (Miniflare on its own socket, not wrangler's dev
 * proxy), per scenario, against a hello-world Worker in the same run:
 *   hello     the baseline Worker (scripts/benchmarks/hello-worker.js)
 *   parse     a reference, not a baseline: a plain Worker that parses the JSON body and answers a constant
 *             (scripts/benchmarks/parse-worker.js), what any Worker answering a classify request pays
 *   cache     /v1/classify, auto mode, every held-out row already cached (in-isolate LRU hits)
 *   edge      /v1/classify with cascade "edge": the model's edge variant in onnxruntime-web, no cache
 *   regional  /v1/classify with cascade "regional": signed forward to a real regional pool on loopback
 * Throughput is closed-loop (`--connections` in flight, as fast as answers come). Latency percentiles are
 * open-loop at one fixed offered rate for every scenario (`--rate`), each request timed from when it was
 * due, so a stall is not hidden by the generator waiting (coordinated omission). Rounds interleave the
 * scenarios so drift on a shared machine hits all of them (a round's closed loops back to back, in reverse order
 * every other round, then its open loops); medians are reported, and each scenario's
 * throughput and CPU against hello as the median of the rounds' own ratios, with their range. workerd's CPU per
 * request (its threads' time on a core, /proc schedstat) is taken during the closed loop: what a deployment pays
 * for, barely moved by other load. With `--pin on` (the default where `taskset` exists) every workerd runs on
 * core 0 and this process (the load generator) and the pool on core 1 (core-pinning.ts): unpinned, the two took
 * turns on the same cores and single rounds' ratios swung by ±0.3.
 * Each Worker is reached two ways (`--socket`): through Miniflare's own port, where Miniflare's JavaScript entry
 * Worker copies every request and response (the issue's measurement; measured ~120 µs of workerd CPU per
 * request, most of hello-world's), and through a socket straight into the Worker (`unsafeDirectSockets`), which is
 * closer to what Cloudflare's runtime runs.
 * Then the forward overhead (forward-overhead.ts): one connection, wrk, cascade "regional" minus cascade
 * "edge" minus the pool answering the same signed call directly, beside its floor (a trivial forwarding
 * Worker, forward-worker.js). The stack signs its calls (a random shared secret), as deployments do.
 * First the whole held-out set goes through the cascade once: the share answered at the edge and accuracy.
 * Takes about 30 s to start (bundle, model), then per configuration rounds x scenarios x (warmup + duration +
 * latency-duration + ~0.5) s (5 scenarios in the first, 4 in the others), and forward-rounds x 5 x 3 s: with the
 * defaults (three configurations), about 6 minutes.
 * Runs under `flock /tmp/edgecascade-bench.lock` (re-executing itself) so benchmarks never overlap.
 */
const { values: args } = processFlags({
  name: "bench:edge",
  usage: "npm run bench:edge -- [options]",
  flags: {
    connections: {
      type: "number",
      placeholder: "N",
      default: 32,
      min: 1,
      integer: true,
      help: "requests in flight, closed loop",
    },
    duration: {
      type: "number",
      placeholder: "S",
      default: 2,
      min: 1,
      help: "seconds of each closed loop (req/s, CPU)",
    },
    "latency-duration": {
      type: "number",
      placeholder: "S",
      default: 2,
      min: 1,
      help: "seconds of each open loop (latency)",
    },
    rate: { type: "number", placeholder: "R", default: 200, min: 1, help: "requests per second, open loop" },
    warmup: { type: "number", placeholder: "S", default: 0.5, help: "seconds of warm-up before each run" },
    rounds: { type: "number", placeholder: "N", default: 5, min: 1, integer: true, help: "interleaved rounds" },
    "forward-rounds": {
      type: "number",
      placeholder: "N",
      default: 3,
      min: 1,
      integer: true,
      help: "rounds of the forward overhead",
    },
    out: OUT_FLAG,
    model: MODEL_FLAG,
    pin: {
      type: "string",
      choices: ["on", "off"],
      default: "on",
      help: "workerd on core 0, the load generator and the pool on core 1 (taskset; unpinned where absent)",
    },
    "cache-api": {
      type: "string",
      choices: ["off", "on", "both"],
      default: "both",
      help: "Miniflare's Cache API simulation for both Workers",
    },
    socket: {
      type: "string",
      choices: ["entry", "direct", "both"],
      default: "both",
      help: "reach the Workers through Miniflare's entry Worker, straight (unsafeDirectSockets), or both",
    },
  },
});
const {
  connections,
  duration: durationS,
  "latency-duration": latencyS,
  rate,
  warmup: warmupS,
  rounds,
  "forward-rounds": forwardRounds,
} = args;
holdBenchLock();
/**
 * Miniflare's Cache API simulation for both Workers: "off" (the edge with LOCAL_CACHE_ONLY, Miniflare's
 * `cacheAPI: false` for both, as Cloudflare pays no simulation), "on" (as before), or "both" (off first: the
 * headline figures, the forward overhead and the cascade; then on, the scenarios only).
 */
const CACHE_SETTINGS = { off: ["off"], on: ["on"], both: ["off", "on"] } as const;
const cacheSettings = CACHE_SETTINGS[args["cache-api"]];
const SOCKETS = { entry: ["entry"], direct: ["direct"], both: ["entry", "direct"] } as const;
const sockets = SOCKETS[args.socket];
interface Configuration {
  cacheApi: "on" | "off";
  socket: "entry" | "direct";
}
/**
 * The runs, the headline first (the first Cache API setting through the first socket): every socket with the
 * first Cache API setting, then the other Cache API setting through the first socket.
 */
const configurations: Configuration[] = [
  ...sockets.map((socket) => ({ cacheApi: cacheSettings[0], socket })),
  ...cacheSettings.slice(1).map((cacheApi) => ({ cacheApi, socket: sockets[0] })),
];
const configurationName = (c: Configuration) =>
  `cache API ${c.cacheApi}, ${c.socket === "entry" ? "through Miniflare's entry Worker" : "direct socket"}`;
if (!haveWrk()) {
  console.error("bench:edge needs wrk for the forward overhead (Debian: sudo apt-get install wrk)");
  process.exit(1);
}

/** The model the requests name (`--model`, default digits) and its held-out rows. */
const target = probeTarget(join(ROOT, "models"), args.model);
const { model, heldout } = target;
if (!target.edge) {
  console.error(`bench:edge: ${model} has no edge variant; its requests are all forwarded (see bench:regional)`);
  process.exit(2);
}
/** Results of another model than digits go to their own files. */
const suffix = model === "digits" ? "" : `-${model}`;
const bodies = (parameters?: object) =>
  heldout.rows.map((row) => JSON.stringify({ model, inputs: row.input, ...(parameters ? { parameters } : {}) }));

interface Scenario {
  name: "hello" | "parse" | "cache" | "edge" | "regional";
  what: string;
  url: string;
  path: string;
  bodies: string[];
}

interface Tally {
  requests: number;
  errors: number;
  servedBy: Record<string, number>;
}

/** The scenario's i-th request and, as its answer comes, what it counts for (the generator: tools/probe/load.ts). */
const load = (s: Scenario, tally: Tally) => ({
  next: (i: number) => ({
    path: s.path,
    headers: { "content-type": "application/json" },
    body: s.bodies[i % s.bodies.length],
  }),
  onResponse: (r: LoadResponse) => {
    tally.requests++;
    if (r.status !== 200) tally.errors++;
    if (r.status === 0) return;
    const by = headerValue(r.headers, "x-served-by") ?? "none";
    tally.servedBy[by] = (tally.servedBy[by] ?? 0) + 1;
  },
});

interface Measurement {
  reqPerSec: number;
  /** workerd's CPU (its threads' time on a core) per request during the closed loop, in µs; null when its pid is unknown. */
  cpuUsPerRequest: number | null;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Share of the machine's CPU time the hypervisor took during the closed loop (/proc/stat); null where unknown. */
  steal?: number | null;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

const loadAtStart = loadavg();
/** Taken before pinning: this process then sees one core. */
const machineCores = availableParallelism();

async function main() {
  console.log("starting a regional pool, the edge Worker, the hello-world and the forwarding Workers...");
  const secret = randomBytes(16).toString("hex");
  const regional = await startRegionalPool({ region: "bench", workers: 1, env: { REGIONAL_SHARED_SECRET: secret } });
  /** The edge Worker, hello-world and the parse reference, in one configuration. */
  const startPair = async ({ cacheApi, socket }: Configuration) => {
    const directSocket = socket === "direct";
    const edge = await startEdgeWorker({
      vars: {
        REGIONS: JSON.stringify([{ name: "bench", url: regional.url, latitude: 39.04, longitude: -77.49 }]),
        REGIONAL_SHARED_SECRET: secret,
        // The bench measures the forwarding path, not the SLO: with 10 ms on a loaded 2-core box, some forwards
        // would degrade. The servedBy tallies below show what answered.
        SLO_BUDGET_MS: "1000",
        LOCAL_CACHE_ONLY: cacheApi === "off" ? "true" : "false",
      },
      rateLimit: false,
      cacheApi: cacheApi === "on",
      directSocket,
    });
    const hello = await startHelloWorker({ cacheApi: cacheApi === "on", directSocket });
    const parse = await startHelloWorker({ script: "parse", cacheApi: cacheApi === "on", directSocket });
    const helloUrl = hello.url;
    // A warm isolate: its edge variants loaded (a cold one forwards its first requests; bench:cold measures those).
    const ready = await fetch(`${edge.url}/v2/health/ready`);
    if (ready.status !== 200) throw new Error(`the edge variants did not load: ${await ready.text()}`);
    return { edge, hello, helloUrl, parse };
  };
  const pairs = new Map<string, Awaited<ReturnType<typeof startPair>>>();
  for (const c of configurations) pairs.set(configurationName(c), await startPair(c));
  const { edge, helloUrl, parse } = pairs.get(configurationName(configurations[0]!))!;
  const trivial = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath: join(ROOT, "scripts/benchmarks/forward-worker.js"),
      compatibilityDate: "2026-04-01",
      bindings: { TARGET: regional.url },
      // As startEdgeWorker reaches loopback regions (scripts/stack/region-bindings.ts).
      serviceBindings: { REGION: { external: { address: new URL(regional.url).host, http: {} } } },
      cf: {},
      host: "127.0.0.1",
      port: 0,
    }),
  );
  const trivialUrl = (await trivial.ready).toString().replace(/\/$/, "");
  const tasksetHere = haveTaskset();
  // What this process may run on before any pinning: the cores to split, and what to go back to on failure.
  const allowed = (tasksetHere && affinity(process.pid)) || "";
  let plan = corePlan(args.pin === "on", parseCpuList(allowed), tasksetHere);
  if (plan.pinned) {
    const servers = [...pairs.values()].flatMap((p) => [p.edge.url, p.helloUrl, p.parse.url]).concat(trivialUrl);
    const serverPids = servers.map((url) => listeningPid(url));
    const generatorPids = [regional.pid, process.pid];
    const pin = (cpus: (side: "server" | "generator") => string) =>
      [
        ...serverPids.map((pid) => pid !== undefined && pinProcess(pid, cpus("server"))),
        ...generatorPids.map((pid) => pinProcess(pid, cpus("generator"))),
      ].every(Boolean);
    const { server, generator } = plan;
    if (!pin((side) => (side === "server" ? server : generator))) {
      // Half a plan is worse than none: every process back on every core, and the report says why.
      pin(() => allowed);
      plan = { pinned: false, why: "taskset could not pin every process (a workerd's pid unknown, or refused)" };
    }
  }
  console.log(
    plan.pinned
      ? `pinned: workerd on core ${plan.server}, the load generator and the pool on core ${plan.generator}`
      : `not pinned: ${plan.why}`,
  );
  const cleanUp = async () => {
    const workers = [...pairs.values()].flatMap((p) => [p.edge.dispose(), p.hello.dispose(), p.parse.dispose()]);
    await Promise.allSettled([...workers, trivial.dispose(), regional.stop()]);
  };
  // Ctrl-C must not leave workerd or the pool running.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanUp().then(() => process.exit(130)));
  }

  try {
    // The cascade over the whole held-out set (this also fills the cache for the cache-hit scenario).
    const ask = async (body: string, url = edge.url) => {
      const response = await fetch(`${url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      return (await response.json()) as { servedBy: string; predictions: { class: number }[] };
    };
    const auto = bodies();
    const cascade = { edge: 0, regional: 0, other: 0, correct: 0 };
    for (const [i, body] of auto.entries()) {
      const answer = await ask(body);
      if (answer.servedBy === "edge") cascade.edge++;
      else if (answer.servedBy.startsWith("regional:")) cascade.regional++;
      else cascade.other++;
      if (answer.predictions[0]!.class === heldout.rows[i]!.label) cascade.correct++;
    }
    let fullCorrect = 0;
    let edgeCorrect = 0;
    for (const [i, body] of bodies({ cascade: "regional" }).entries()) {
      if ((await ask(body)).predictions[0]!.class === heldout.rows[i]!.label) fullCorrect++;
    }
    for (const [i, body] of bodies({ cascade: "edge" }).entries()) {
      if ((await ask(body)).predictions[0]!.class === heldout.rows[i]!.label) edgeCorrect++;
    }
    const n = heldout.rows.length;
    const referenceFull = heldout.rows.filter((r) => argmax(r.expected[model]!) === r.label).length;

    /** The scenarios' rounds against one edge Worker and its hello-world: medians and ratios to hello. */
    const measureScenarios = async (
      edgeAt: string,
      helloAt: string,
      parseAt: string,
      label: string,
      withRegional: boolean,
    ) => {
      const scenarios: Scenario[] = [
        { name: "hello", what: "hello-world Worker (baseline)", url: helloAt, path: "/", bodies: auto },
        {
          name: "parse",
          what: "reference: a plain Worker parsing the JSON body, a constant answer",
          url: parseAt,
          path: "/",
          bodies: auto,
        },
        { name: "cache", what: "cache hit (auto, every row cached)", url: edgeAt, path: "/v1/classify", bodies: auto },
        {
          name: "edge",
          what: "edge inference (cascade edge, no cache)",
          url: edgeAt,
          path: "/v1/classify",
          bodies: bodies({ cascade: "edge" }),
        },
      ];
      if (withRegional) {
        scenarios.push({
          name: "regional",
          what: "regional forward (cascade regional, real pool)",
          url: edgeAt,
          path: "/v1/classify",
          bodies: bodies({ cascade: "regional" }),
        });
      }
      const samples = Object.fromEntries(scenarios.map((s) => [s.name, [] as Measurement[]]));
      const tallies = Object.fromEntries(
        scenarios.map((s) => [s.name, { requests: 0, errors: 0, servedBy: {} } as Tally]),
      );
      for (let r = 1; r <= rounds; r++) {
        // Every scenario's closed loop back to back, so that a round's ratios compare runs seconds apart; every
        // other round in reverse order, so that drift during a round does not always favour the same scenario.
        // Then the open loops (latency), in the same order.
        const order = r % 2 === 1 ? scenarios : [...scenarios].reverse();
        const clients = new Map(
          order.map((s) => [s.name, new LoadClient(s.url, { connections: Math.max(connections, 64) })]),
        );
        const closed = new Map<string, Pick<Measurement, "reqPerSec" | "cpuUsPerRequest" | "steal">>();
        for (const s of order) {
          const client = clients.get(s.name)!;
          const tally = tallies[s.name]!;
          const scratch: Tally = { requests: 0, errors: 0, servedBy: {} };
          await closedLoop({ origin: s.url, client, connections, durationS: warmupS, ...load(s, scratch) });
          const pid = listeningPid(s.url);
          const cpuBefore = pid === undefined ? undefined : cpuMs(pid);
          const ticksBefore = machineTicks();
          const requestsBefore = tally.requests;
          const { reqPerSec } = (await closedLoop({ origin: s.url, client, connections, durationS, ...load(s, tally) }))
            .summary;
          const cpuAfter = pid === undefined ? undefined : cpuMs(pid);
          const steal = stealShare(ticksBefore, machineTicks()) ?? null;
          const answered = tally.requests - requestsBefore;
          const cpuUsPerRequest =
            cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1000) / answered : null;
          closed.set(s.name, { reqPerSec, cpuUsPerRequest, steal });
        }
        for (const s of order) {
          const client = clients.get(s.name)!;
          const { latency } = (
            await openLoop({ origin: s.url, client, rate, durationS: latencyS, ...load(s, tallies[s.name]!) })
          ).summary;
          const m = { ...closed.get(s.name)!, p50Ms: latency.p50Ms, p95Ms: latency.p95Ms, p99Ms: latency.p99Ms };
          samples[s.name]!.push(m);
          console.log(
            `${label} round ${r} ${s.name.padEnd(8)} ${m.reqPerSec.toFixed(0).padStart(6)} req/s  ` +
              `workerd CPU ${m.cpuUsPerRequest?.toFixed(0) ?? "?"} µs/request  ` +
              `p50 ${m.p50Ms.toFixed(2)} p95 ${m.p95Ms.toFixed(2)} p99 ${m.p99Ms.toFixed(2)} ms @ ${rate}/s` +
              (m.steal == null ? "" : `  steal ${(m.steal * 100).toFixed(0)}%`),
          );
        }
        await Promise.all([...clients.values()].map((c) => c.close()));
      }

      const result = Object.fromEntries(
        scenarios.map((s) => {
          const ms = samples[s.name]!;
          const cpus = ms.flatMap((m) => (m.cpuUsPerRequest === null ? [] : [m.cpuUsPerRequest]));
          const med = {
            reqPerSec: round(median(ms.map((m) => m.reqPerSec)), 0),
            cpuUsPerRequest: cpus.length ? round(median(cpus), 0) : null,
            p50Ms: round(median(ms.map((m) => m.p50Ms))),
            p95Ms: round(median(ms.map((m) => m.p95Ms))),
            p99Ms: round(median(ms.map((m) => m.p99Ms))),
          };
          return [s.name, { what: s.what, ...med, rounds: ms, tally: tallies[s.name] }];
        }),
      );
      const base = result.hello!;
      const helloRounds = samples.hello!;
      const rounded = (r: PairedRatio | undefined) =>
        r ? { median: round(r.median), min: round(r.min), max: round(r.max) } : null;
      for (const s of scenarios) {
        const m = result[s.name]!;
        const ms = samples[s.name]!;
        // Per round, against the hello run of the same round: load from elsewhere that comes and goes cancels out.
        const throughput = rounded(
          pairedRatio(
            ms.map((x) => x.reqPerSec),
            helloRounds.map((x) => x.reqPerSec),
          ),
        )!;
        const cpu = rounded(
          pairedRatio(
            ms.map((x) => x.cpuUsPerRequest),
            helloRounds.map((x) => x.cpuUsPerRequest),
          ),
        );
        Object.assign(m, {
          vsHello: {
            throughput: throughput.median,
            throughputRange: [throughput.min, throughput.max],
            cpu: cpu?.median ?? null,
            cpuRange: cpu ? [cpu.min, cpu.max] : null,
            p50: round(m.p50Ms / base.p50Ms, 2),
            p99: round(m.p99Ms / base.p99Ms, 2),
          },
        });
      }
      return result;
    };
    const headline = configurationName(configurations[0]!);
    const result = await measureScenarios(edge.url, helloUrl, parse.url, headline, true);
    const others: Record<string, typeof result> = {};
    for (const c of configurations.slice(1)) {
      const name = configurationName(c);
      const pair = pairs.get(name)!;
      // A direct socket reaches the same isolate as the entry port: its cache is already full.
      if (c.socket === "entry") for (const body of auto) await ask(body, pair.edge.url);
      others[name] = await measureScenarios(pair.edge.url, pair.helloUrl, pair.parse.url, name, false);
    }
    console.log("forward overhead (wrk, one connection)...");
    const forward = await measureForwardOverhead({
      edgeUrl: edge.url,
      poolUrl: regional.url,
      helloUrl,
      trivialUrl,
      model,
      secret,
      heldout,
      seconds: 3,
      rounds: forwardRounds,
      onRound: (r, m) =>
        console.log(
          `forward round ${r}  p50/p95 ms: regional ${m.regional.p50Ms}/${m.regional.p95Ms}  edge ${m.edge.p50Ms}/${m.edge.p95Ms}  ` +
            `pool ${m.pool.p50Ms}/${m.pool.p95Ms}  trivial forward ${m.trivial.p50Ms}/${m.trivial.p95Ms}  hello ${m.hello.p50Ms}/${m.hello.p95Ms}`,
        ),
    });
    const versions = (pkg: string) =>
      JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version as string;
    const report = {
      command: `npm run bench:edge${suffix ? ` -- --model ${model}` : ""}`,
      date: new Date().toISOString(),
      loadAtStart: loadAtStart.map((x) => round(x, 2)),
      machine: {
        cpu: cpus()[0]?.model ?? "unknown",
        cores: machineCores,
        node: process.version,
        miniflare: versions("miniflare"),
        wrangler: versions("wrangler"),
        onnxruntimeWeb: versions("onnxruntime-web"),
        git: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT }).toString().trim(),
      },
      settings: {
        connections,
        durationS,
        latencyDurationS: latencyS,
        warmupS,
        openLoopRatePerS: rate,
        rounds,
        forwardRounds,
        sloBudgetMs: 1000,
      },
      pinning: plan,
      configuration: headline,
      scenarios: result,
      /** The same scenarios in the other configurations (`--socket`, `--cache-api`), by name. */
      otherConfigurations: others,
      forward,
      cascade: {
        rows: n,
        edgeShare: round(cascade.edge / n, 4),
        regionalShare: round(cascade.regional / n, 4),
        otherShare: round(cascade.other / n, 4),
        cascadeAccuracy: round(cascade.correct / n, 4),
        fullModelAccuracy: round(fullCorrect / n, 4),
        edgeModelAccuracy: round(edgeCorrect / n, 4),
        fullModelAccuracyReference: round(referenceFull / n, 4),
      },
    };
    mkdirSync(resolve(ROOT, args.out!), { recursive: true });
    writeFileSync(resolve(ROOT, args.out!, `edge${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(resolve(ROOT, args.out!, `edge${suffix}.md`), markdown(report));
    console.log(`wrote ${args.out}/edge${suffix}.json and ${args.out}/edge${suffix}.md`);
  } finally {
    await cleanUp();
  }
}

type Report = {
  date: string;
  loadAtStart: number[];
  pinning: ReturnType<typeof corePlan>;
  configuration: string;
  otherConfigurations: Record<string, Report["scenarios"]>;
  machine: Record<string, string | number>;
  settings: Record<string, number>;
  scenarios: Record<
    string,
    Measurement & {
      what: string;
      vsHello?: {
        throughput: number;
        throughputRange: [number, number];
        cpu: number | null;
        cpuRange: [number, number] | null;
        p50: number;
        p99: number;
      };
      tally?: Tally;
      rounds: Measurement[];
    }
  >;
  forward: ForwardOverhead;
  cascade: Record<string, number>;
};

function scenarioRows(scenarios: Report["scenarios"]): string[] {
  return Object.values(scenarios).map((s) => {
    const served = Object.entries(s.tally?.servedBy ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    const spread = (f: (m: Measurement) => number, digits: number) => {
      const xs = s.rounds.map(f);
      return `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
    };
    const v = s.vsHello;
    const cpu =
      s.cpuUsPerRequest === null || !v?.cpuRange
        ? "–"
        : `${s.cpuUsPerRequest} | ${v.cpu} (${v.cpuRange[0]}–${v.cpuRange[1]})`;
    const throughput = v ? `${v.throughput} (${v.throughputRange[0]}–${v.throughputRange[1]})` : "";
    return (
      `| ${s.what} | ${s.reqPerSec} (${spread((m) => m.reqPerSec, 0)}) | ${throughput} | ${cpu} | ${s.p50Ms} | ` +
      `${s.p95Ms} | ${s.p99Ms} (${spread((m) => m.p99Ms, 1)}) | ${s.vsHello?.p99} | ${s.tally?.errors ?? 0} | ${served} |`
    );
  });
}

/** The steal share over every closed loop of the run: median and max, in percent. */
function stealSummary(report: Report): string {
  const all = [report.scenarios, ...Object.values(report.otherConfigurations)].flatMap((scenarios) =>
    Object.values(scenarios).flatMap((s) => s.rounds.flatMap((m) => (m.steal == null ? [] : [m.steal]))),
  );
  if (all.length === 0) return "unknown (no /proc/stat)";
  return `median ${(median(all) * 100).toFixed(1)}%, max ${(Math.max(...all) * 100).toFixed(1)}%`;
}

function markdown(report: Report): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const rows = scenarioRows(report.scenarios);
  const otherTables = Object.entries(report.otherConfigurations).map(
    ([name, scenarios]) => `### ${name}

The same Workers' code, the same rounds, in this configuration (the edge Worker with \`LOCAL_CACHE_ONLY=${name.includes("cache API on") ? "false" : "true"}\`).

| scenario | req/s (rounds' range) | req/s vs hello (rounds' ratios: median, range) | workerd CPU µs/request | CPU vs hello (rounds' ratios: median, range) | p50 ms | p95 ms | p99 ms (range) | p99 vs hello | errors | answered by |
|---|---|---|---|---|---|---|---|---|---|---|
${scenarioRows(scenarios).join("\n")}
`,
  );
  const c = report.cascade;
  const fw = report.forward;
  const m = report.machine;
  const st = report.settings;
  return `# Edge Worker benchmark

\`npm run bench:edge\` (runs under \`flock /tmp/edgecascade-bench.lock\`), ${report.date}, git ${m.git}.
Machine: ${m.cpu}, ${m.cores} cores, shared by the load generator, workerd and the regional pool; load average at the
start ${report.loadAtStart.join(" / ")}; the hypervisor's steal during the closed loops ${stealSummary(report)} (on a
VM, other guests' share of the host: CPU per request and req/s move with it).
Node ${m.node}, miniflare ${m.miniflare} (workerd), wrangler ${m.wrangler} (bundle), onnxruntime-web ${m.onnxruntimeWeb}.

The edge Worker is the wrangler bundle run by Miniflare on its own socket (not wrangler's dev proxy). Each
scenario: ${st.warmupS} s warm-up, ${st.durationS} s closed loop with ${st.connections} requests in flight (req/s, workerd CPU), then
${st.latencyDurationS} s open loop at ${st.openLoopRatePerS} req/s (latency, each request timed from when it was due).
${st.rounds} rounds, scenarios interleaved (a round's closed loops back to back, every other round in reverse order, then its open loops); medians, with the rounds' range where it shows how noisy a shared
2-core machine is; against hello, the median of each round's own ratio and the range of those ratios.
Cores: ${report.pinning.pinned ? `workerd (every Worker) pinned to core ${report.pinning.server}, the load generator and the pool to core ${report.pinning.generator} (\`taskset\`, \`--pin\`)` : `not pinned (${report.pinning.why})`}. Single-row requests of model ${model} cycling through its ${heldout.rows.length} held-out rows.
The edge's SLO budget is raised to ${st.sloBudgetMs} ms here so forwards are measured rather than degraded.

| scenario | req/s (rounds' range) | req/s vs hello (rounds' ratios: median, range) | workerd CPU µs/request | CPU vs hello (rounds' ratios: median, range) | p50 ms | p95 ms | p99 ms (range) | p99 vs hello | errors | answered by |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

This table: **${report.configuration}** (\`--cache-api\`: off, the edge Worker runs with \`LOCAL_CACHE_ONLY=true\`
and Miniflare's \`cacheAPI: false\`, as Cloudflare pays for no simulation; \`--socket\`: through Miniflare's own port,
where its JavaScript entry Worker copies every request and response, or straight into each Worker through
\`unsafeDirectSockets\`, closer to what Cloudflare's runtime runs). Every row was answered once before the rounds, so
the isolate is warm (edge variant loaded) and the cache full.

Targets: cache hit at least 0.87× and the edge answer at least 0.9× hello's throughput. The reference row is a plain
Worker that only parses the JSON body and answers a constant of the same shape: what any Worker answering a classify
request reaches against hello-world, before any work of its own. workerd's CPU per request is the workerd process's
threads' time on a core (/proc schedstat) during the closed loop divided by the requests answered; through the entry
port, most of hello's is Miniflare's entry Worker, which a deployment does not run.

${otherTables.join("\n")}
## Forward overhead

One connection (wrk -c1), ${st.forwardRounds} rounds of 3 s per load, p50 / p95 in ms, medians of the rounds' own
differences. The edge's overhead is cascade "regional" through the edge minus cascade "edge" through the edge
minus the pool answering the same signed call directly (target: at most 0.3 ms at p50 and 0.5 ms at p95).
Its floor is the same difference for the least a Worker can do to forward (scripts/benchmarks/forward-worker.js:
read the body, fetch the pool, return the answer) against the hello-world Worker: workerd's own subrequest.

| | p50 ms | p95 ms |
|---|---:|---:|
| edge forward overhead (regional − edge − pool) | ${fw.overheadP50Ms.toFixed(3)} | ${fw.overheadP95Ms.toFixed(3)} |
| floor: a trivial forwarding Worker (trivial − hello − pool) | ${fw.floorP50Ms.toFixed(3)} | ${fw.floorP95Ms.toFixed(3)} |
| the edge's own part (overhead − floor) | ${(fw.overheadP50Ms - fw.floorP50Ms).toFixed(3)} | ${(fw.overheadP95Ms - fw.floorP95Ms).toFixed(3)} |

| round | regional | edge | pool | trivial forward | hello |
|---|---|---|---|---|---|
${fw.rounds
  .map(
    (r, i) =>
      `| ${i + 1} | ${[r.regional, r.edge, r.pool, r.trivial, r.hello].map((x) => `${x.p50Ms} / ${x.p95Ms}`).join(" | ")} |`,
  )
  .join("\n")}

## Cascade on the held-out set (${c.rows} rows, one request each, through the Worker)

| | |
|---|---|
| answered at the edge | ${pct(c.edgeShare!)} |
| forwarded to the region | ${pct(c.regionalShare!)} |
| other (cache, degraded) | ${pct(c.otherShare!)} |
| cascade accuracy | ${pct(c.cascadeAccuracy!)} |
| full model alone (cascade regional) | ${pct(c.fullModelAccuracy!)} |
| edge model alone (cascade edge) | ${pct(c.edgeModelAccuracy!)} |
| full model, build-time reference | ${pct(c.fullModelAccuracyReference!)} |

Inside a Worker the clock only moves on I/O, so the Worker cannot time its own CPU work; these numbers are
taken from outside, end to end on loopback, and include the load generator sharing the same cores.
`;
}

await main();
