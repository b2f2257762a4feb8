/**
 * npm run validate:capacity: capacity at a peak rate (default 1,000,000 req/s), on paper, from measured figures:
 * the per-request costs in bench/edge.json (Worker CPU per path) and bench/regional.json (a pool process's
 * throughput), each sample model's edge share in bench/models.json, the cache hit rate measured by
 * bench/latency.json when it exists, and the pod shape and autoscaler bounds in deploy/k8s. Writes
 * bench/capacity.json and bench/capacity.md (docs/capacity.md explains the method). Takes a second.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { OUT_FLAG } from "../run-flags.ts";
import { type CapacityInputs, capacityPlan, workerUsPerRequest } from "./capacity-model.ts";
import { ROOT, runInfo, runLine } from "./run-info.ts";

/** Where users are, for the six pool regions of deploy/k8s/overlays: an assumption, stated in the output. */
const DEFAULT_REGIONS = [
  "us-east=0.25",
  "us-west=0.15",
  "eu-central=0.2",
  "eu-west=0.15",
  "ap-northeast=0.15",
  "ap-southeast=0.1",
];

const FLAGS = {
  peak: {
    type: "number",
    placeholder: "RPS",
    default: 1_000_000,
    min: 1,
    defaultText: "1000000",
    help: "worldwide peak, requests per second",
  },
  "cache-hit": {
    type: "number",
    placeholder: "R",
    max: 1,
    defaultText: "bench/latency.json's measured share, else 0.6",
    help: "share answered from the cache",
  },
  models: {
    type: "list",
    placeholder: "LIST",
    defaultText: "every model of bench/models.json, equal shares",
    help: "name=share of the traffic",
  },
  regions: {
    type: "list",
    placeholder: "LIST",
    default: DEFAULT_REGIONS,
    defaultText: "the deploy overlays' regions, see docs/capacity.md",
    help: "name=share of the forwarded traffic",
  },
  headroom: {
    type: "number",
    placeholder: "R",
    default: 0.3,
    max: 0.99,
    defaultText: "0.3: the autoscaler's 70% CPU target",
    help: "share of each pod's capacity kept free",
  },
  "busiest-client": {
    type: "number",
    placeholder: "R",
    default: 0.1,
    max: 1,
    defaultText: "0.1; 0 leaves the rate limit out",
    help: "share of all traffic the biggest API key sends",
  },
  locations: {
    type: "number",
    placeholder: "N",
    default: 300,
    min: 1,
    integer: true,
    help: "Cloudflare locations a client's traffic spreads over",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), "utf8"));

function shares(items: string[], flag: string): { name: string; trafficShare: number }[] {
  return items.map((item) => {
    const [name, share] = item.split("=");
    const trafficShare = share?.trim() ? Number(share) : Number.NaN;
    if (!name || !(trafficShare >= 0 && trafficShare <= 1)) {
      throw new UsageError(`--${flag}: "${item}" is not name=share with a share from 0 to 1`);
    }
    return { name, trafficShare };
  });
}

/** The measured cache hit rate of the latency run (mean over its client locations), when there is one. */
function measuredCacheHit(): { rate: number; source: string } | undefined {
  if (!existsSync(join(ROOT, "bench/latency.json"))) return undefined;
  const latency = read("bench/latency.json") as { info: { date: string }; locations: { cacheShare: number }[] };
  if (latency.locations.length === 0) return undefined;
  const rate = latency.locations.reduce((s, l) => s + l.cacheShare, 0) / latency.locations.length;
  return { rate, source: `bench/latency.json (${latency.info.date}), mean over its client locations` };
}

/** The deployed environments' rate limit, requests per second per client (wrangler.toml's first `simple`). */
function wranglerRateLimit(): number {
  const text = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const match = /simple\s*=\s*\{\s*limit\s*=\s*(\d+)\s*,\s*period\s*=\s*(\d+)\s*\}/.exec(text);
  if (!match) throw new Error("wrangler.toml: no [[ratelimits]] simple = { limit, period }");
  return Number(match[1]) / Number(match[2]);
}

const k8s = (file: string, pattern: RegExp, what: string) => {
  const text = readFileSync(join(ROOT, "deploy/k8s", file), "utf8");
  const match = pattern.exec(text)?.[1];
  if (!match) throw new Error(`deploy/k8s/${file}: no ${what}`);
  return Number(match);
};

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const edge = read("bench/edge.json") as { date: string; scenarios: Record<string, { reqPerSec: number }> };
  const regional = read("bench/regional.json") as {
    date: string;
    servers: { a: { reqPerSec: number; userUsPerRequest: number; kernelUsPerRequest: number } };
  };
  const bench = read("bench/models.json") as {
    date: string;
    models: { name: string; cascade: { edgeShare: number } }[];
  };
  const measured = measuredCacheHit();
  const cacheHitRate = values["cache-hit"] ?? measured?.rate ?? 0.6;
  const modelShares =
    values.models.length > 0
      ? shares(values.models, "models")
      : bench.models.map((m) => ({ name: m.name, trafficShare: 1 / bench.models.length }));
  const models = modelShares.map((m) => {
    const measuredModel = bench.models.find((b) => b.name === m.name);
    if (!measuredModel) throw new Error(`--models: no ${m.name} in bench/models.json (run npm run bench:models)`);
    return { ...m, edgeShare: measuredModel.cascade.edgeShare };
  });
  const { hello, cache, edge: edgeScenario, regional: forward } = edge.scenarios;
  if (!hello || !cache || !edgeScenario || !forward)
    throw new Error("bench/edge.json lacks a scenario; run npm run bench:edge");
  const workerUs = {
    cache: workerUsPerRequest(cache.reqPerSec, hello.reqPerSec),
    edge: workerUsPerRequest(edgeScenario.reqPerSec, hello.reqPerSec),
    // The forward scenario ran the edge model too (cascade "regional" skips it; see docs/capacity.md): its cost
    // over the hello world is the forward alone.
    forward: workerUsPerRequest(forward.reqPerSec, hello.reqPerSec),
  };
  const inputs: CapacityInputs = {
    peakRps: values.peak,
    cacheHitRate,
    models,
    regions: shares(values.regions, "regions"),
    workerUs,
    poolRpsPerProcess: regional.servers.a.reqPerSec,
    pod: {
      processes: k8s("base/deployment.yaml", /--workers=(\d+)/, "--workers"),
      headroom: values.headroom,
      minReplicas: k8s("base/scaledobject.yaml", /minReplicaCount:\s*(\d+)/, "minReplicaCount"),
      maxReplicas: k8s("base/scaledobject.yaml", /maxReplicaCount:\s*(\d+)/, "maxReplicaCount"),
    },
    p95Share: 0.05,
    rateLimit: {
      perClientRps: wranglerRateLimit(),
      locations: values.locations,
      busiestClientShare: values["busiest-client"],
    },
  };
  const plan = capacityPlan(inputs);
  const info = runInfo(`npm run validate:capacity -- ${process.argv.slice(2).join(" ")}`.trim());
  const sources = {
    workerUs: `bench/edge.json (${edge.date}): 1e6 / req/s of each scenario minus the hello-world Worker's`,
    poolRpsPerProcess: `bench/regional.json (${regional.date}): the pool's req/s, one process`,
    edgeShares: `bench/models.json (${bench.date})`,
    cacheHitRate: values["cache-hit"] ? "--cache-hit" : (measured?.source ?? "default 0.6 (the probe's repeat share)"),
    pod: "deploy/k8s/base (deployment --workers, ScaledObject min/maxReplicaCount)",
    regions: values.regions ? "--regions" : "assumed split of users over the six pool regions",
    rateLimit: "wrangler.toml [[ratelimits]]; the locations and the busiest client's share are assumptions (flags)",
  };
  const out = resolve(ROOT, values.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "capacity.json"), `${JSON.stringify({ info, inputs, sources, plan }, null, 2)}\n`);
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const md = [
    `# Capacity at ${n(inputs.peakRps)} requests/s`,
    "",
    runLine(info),
    "",
    "Computed by `scripts/validate/capacity-model.ts` from measured figures; the method is in docs/capacity.md.",
    "",
    "## Inputs",
    "",
    "| input | value | from |",
    "|---|---|---|",
    `| cache hit rate | ${pct(cacheHitRate)} | ${sources.cacheHitRate} |`,
    ...models.map(
      (m) => `| ${m.name}: traffic, edge share | ${pct(m.trafficShare)}, ${pct(m.edgeShare)} | ${sources.edgeShares} |`,
    ),
    `| Worker CPU per request: cache hit, edge model, forward | ${workerUs.cache.toFixed(0)} µs, ${workerUs.edge.toFixed(0)} µs, ${workerUs.forward.toFixed(0)} µs | ${sources.workerUs} |`,
    `| pool throughput per process | ${n(inputs.poolRpsPerProcess)} req/s | ${sources.poolRpsPerProcess} |`,
    `| pod | ${inputs.pod.processes} processes, ${pct(inputs.pod.headroom)} headroom, ${inputs.pod.minReplicas}-${inputs.pod.maxReplicas} replicas | ${sources.pod} |`,
    `| rate limit | ${inputs.rateLimit.perClientRps} req/s per client per location, ${inputs.rateLimit.locations} locations, busiest client ${pct(inputs.rateLimit.busiestClientShare)} of traffic | ${sources.rateLimit} |`,
    `| regions | ${inputs.regions.map((r) => `${r.name} ${pct(r.trafficShare)}`).join(", ")} | ${sources.regions} |`,
    "",
    "## At the peak",
    "",
    "| | requests/s | share |",
    "|---|---|---|",
    `| answered from the cache | ${n(plan.rates.cache)} | ${pct(plan.rates.cache / inputs.peakRps)} |`,
    `| answered by the edge model | ${n(plan.rates.edge)} | ${pct(plan.rates.edge / inputs.peakRps)} |`,
    `| forwarded to a region | ${n(plan.rates.regional)} | ${pct(plan.forwardedShare)} |`,
    "",
    `Worker CPU: **${plan.worker.meanUsPerRequest.toFixed(0)} µs per request** on average, **${n(plan.worker.totalCores)} CPU-seconds per second** worldwide (cores busy across Cloudflare's network).`,
    "",
    `| region | forwarded req/s | pods (${n(plan.podRps)} req/s each with headroom) | within the maximum |`,
    "|---|---|---|---|",
    ...plan.regions.map((r) => `| ${r.name} | ${n(r.rps)} | ${r.pods} | ${r.withinMax ? "yes" : "**no**"} |`),
    "",
    "## What gives out first as traffic grows",
    "",
    "| limit | at a worldwide peak of | why |",
    "|---|---|---|",
    ...plan.limits.map(
      (l) =>
        `| ${l.what} | ${Number.isFinite(l.atPeakRps) ? `${n(l.atPeakRps)} req/s` : "not by traffic"} | ${l.why} |`,
    ),
  ].join("\n");
  writeFileSync(join(out, "capacity.md"), `${md}\n`);
  console.log(md);
  return 0;
}

runMain(
  defineCommand({
    name: "validate:capacity",
    usage: "npm run validate:capacity -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
