import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { processFlags } from "../../tools/cli/command.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { classifyAt, measureCascade } from "./edge/cascade.ts";
import { EDGE_BENCH_FLAGS } from "./edge/flags.ts";
import { markdown } from "./edge/report.ts";
import { measureScenarios, round } from "./edge/scenarios.ts";
import { type Configuration, configurationName, startBenchWorkers } from "./edge/workers.ts";
import { measureForwardOverhead } from "./forward-overhead.ts";
import { holdBenchLock } from "./lock.ts";
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
  flags: EDGE_BENCH_FLAGS,
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
/**
 * The runs, the headline first (the first Cache API setting through the first socket): every socket with the
 * first Cache API setting, then the other Cache API setting through the first socket.
 */
const configurations: Configuration[] = [
  ...sockets.map((socket) => ({ cacheApi: cacheSettings[0], socket })),
  ...cacheSettings.slice(1).map((cacheApi) => ({ cacheApi, socket: sockets[0] })),
];
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

const loadAtStart = loadavg();
/** Taken before pinning: this process then sees one core. */
const machineCores = availableParallelism();

async function main() {
  const { secret, regional, pairs, trivialUrl, plan, cleanUp } = await startBenchWorkers(
    configurations,
    args.pin === "on",
  );
  const { edge, helloUrl, parse } = pairs.get(configurationName(configurations[0]!))!;
  try {
    const scenarioBodies = {
      auto: bodies(),
      edge: bodies({ cascade: "edge" }),
      regional: bodies({ cascade: "regional" }),
    };
    const cascade = await measureCascade(edge.url, scenarioBodies, heldout, model);
    const settings = { rounds, connections, warmupS, durationS, rate, latencyS };
    const headline = configurationName(configurations[0]!);
    const result = await measureScenarios(
      settings,
      { edge: edge.url, hello: helloUrl, parse: parse.url },
      scenarioBodies,
      headline,
      true,
    );
    const others: Record<string, typeof result> = {};
    for (const c of configurations.slice(1)) {
      const name = configurationName(c);
      const pair = pairs.get(name)!;
      // A direct socket reaches the same isolate as the entry port: its cache is already full.
      if (c.socket === "entry") for (const body of scenarioBodies.auto) await classifyAt(pair.edge.url, body);
      others[name] = await measureScenarios(
        settings,
        { edge: pair.edge.url, hello: pair.helloUrl, parse: pair.parse.url },
        scenarioBodies,
        name,
        false,
      );
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
      cascade,
    };
    mkdirSync(resolve(ROOT, args.out!), { recursive: true });
    writeFileSync(resolve(ROOT, args.out!, `edge${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(resolve(ROOT, args.out!, `edge${suffix}.md`), markdown(report, model, heldout.rows.length));
    console.log(`wrote ${args.out}/edge${suffix}.json and ${args.out}/edge${suffix}.md`);
  } finally {
    await cleanUp();
  }
}

await main();
