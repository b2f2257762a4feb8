/**
 * bench:edge's Workers and pool, started and pinned.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { ROOT } from "../../../tools/edge-bundle/build-edge.ts";
import { startEdgeWorker } from "../../stack/edge-worker.ts";
import { startRegionalPool } from "../../stack/regional-pool.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "../core-pinning.ts";
import { startHelloWorker } from "../hello.ts";
import { listeningPid } from "../process-cpu.ts";

/** One way of running the Workers: Miniflare's Cache API simulation on or off, reached through which socket. */
export interface Configuration {
  cacheApi: "on" | "off";
  socket: "entry" | "direct";
}

export const configurationName = (c: Configuration) =>
  `cache API ${c.cacheApi}, ${c.socket === "entry" ? "through Miniflare's entry Worker" : "direct socket"}`;

/**
 * What bench:edge runs against: a regional pool (its calls signed with a random shared secret, as deployments
 * do), per configuration the edge Worker, hello-world and the parse reference, and the trivial forwarding
 * Worker; with `pin`, workerd on one core and the load generator and the pool on another (core-pinning.ts).
 * `cleanUp` stops them all, as Ctrl-C does.
 */
export async function startBenchWorkers(configurations: readonly Configuration[], pin: boolean) {
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
  let plan = corePlan(pin, parseCpuList(allowed), tasksetHere);
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
  return { secret, regional, pairs, trivialUrl, plan, cleanUp };
}
