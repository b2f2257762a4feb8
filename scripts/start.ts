/**
 * npm start: the whole local stack. Regional pools us, eu, ap (each a real `npm run regional` process
 * with a simulated location) and the edge Worker in local workerd routed to them; waits until every tier
 * is ready, prints the URLs and a status line per tier; Ctrl-C stops everything.
 *
 * Ports: --edge-port / EDGE_PORT (8787), --us-port / --eu-port / --ap-port or US_PORT / EU_PORT / AP_PORT
 * (9001-9003), checked free before anything starts. Environment: REGIONAL_SHARED_SECRET and
 * ADMIN_TOKEN (random per run when unset), REGIONAL_WORKERS (1 per pool), MODELS_DIR (the repository's
 * models/: every model in it is served, by the pools and, with its edge variant, by the Worker); EDGE_<VAR>
 * sets the Worker var <VAR> (e.g. EDGE_API_KEYS=k1,k2, EDGE_SLO_BUDGET_MS=50; docs/edge.md lists them).
 *
 * The Worker keeps its response cache's shared tier and its rate limiter in the isolate (edge/local/): Miniflare's
 * SQLite-backed Cache API and rate-limit simulations cost milliseconds per request that a colo does not.
 * `npm start -- --simulate-platform` (or SIMULATE_PLATFORM=true) runs with Miniflare's simulations instead.
 *
 * Ctrl-C, SIGTERM and SIGHUP stop every process of the stack; so does the end of the process that started this
 * one (npm, killed by an IDE's stop button or `timeout`, which does not pass every signal on).
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { defineCommand, runMain } from "../tools/cli/command.ts";
import { RefusedError, UsageError } from "../tools/cli/errors.ts";
import { MODELS_DIR } from "../tools/edge-bundle/build-edge.ts";
import { readRepository } from "../tools/edge-bundle/edge-models.ts";
import { type EdgeWorker, startEdgeWorker } from "./stack/edge-worker.ts";
import { loadingLine } from "./stack/loading-line.ts";
import { LOCAL_REGIONS } from "./stack/local-regions.ts";
import { modelsLine, NAMED_MODELS } from "./stack/models-banner.ts";
import { probeCommand } from "./stack/probe-command.ts";
import { type RegionalPool, startRegionalPool } from "./stack/regional-pool.ts";
import { REGISTRY_BINDING, type RegistryRelay, relayRegistry } from "./stack/registry-relay.ts";
import { type SeededRegistry, seededRegistry } from "./stack/seeded-registry.ts";
import { busyPorts, stackPorts } from "./stack/stack-ports.ts";
import { type WarmReport, warmStack } from "./stack/warm-stack.ts";

/** Worker vars from EDGE_<VAR> environment variables. */
function edgeVars(): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("EDGE_") && name !== "EDGE_PORT" && value !== undefined) vars[name.slice(5)] = value;
  }
  return vars;
}

/** WARM_UP=false skips warming the stack before "ready"; anything but "true", "false" or unset is refused. */
function warmUp(): boolean {
  const env = process.env.WARM_UP;
  if (env !== undefined && env !== "" && env !== "true" && env !== "false") {
    throw new UsageError(`WARM_UP must be "true" or "false", got ${JSON.stringify(env)}`);
  }
  return env !== "false";
}

/** `--simulate-platform` or SIMULATE_PLATFORM=true: Miniflare's Cache API and rate-limit simulations. */
function simulatePlatform(flag: boolean): boolean {
  const env = process.env.SIMULATE_PLATFORM;
  if (env !== undefined && env !== "" && env !== "true" && env !== "false") {
    throw new UsageError(`SIMULATE_PLATFORM must be "true" or "false", got ${JSON.stringify(env)}`);
  }
  return flag || env === "true";
}

/** The stack's end when the process that started it ends: npm killed, its signal not passed on. */
function onParentGone(stop: () => void): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

async function main(
  simulated: boolean,
  warm: boolean,
  ports: Record<string, number>,
  withRegistry: boolean,
): Promise<void> {
  const started = performance.now();
  const secret = process.env.REGIONAL_SHARED_SECRET || randomBytes(24).toString("hex");
  const adminToken = process.env.ADMIN_TOKEN || randomBytes(24).toString("hex");
  const workers = process.env.REGIONAL_WORKERS ? Number(process.env.REGIONAL_WORKERS) : 1;
  const edgePort = ports.edge!;
  let modelsDir = process.env.MODELS_DIR ? resolve(process.env.MODELS_DIR) : MODELS_DIR;
  const pools: RegionalPool[] = [];
  let edge: EdgeWorker | undefined;
  let registry: SeededRegistry | undefined;
  let relay: RegistryRelay | undefined;
  let stopping = false;

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping...");
    relay?.close();
    await Promise.allSettled([edge?.dispose(), ...pools.map((p) => p.stop())]);
    await registry?.close();
    console.log("stopped");
    process.exit(code);
  };
  const onSignal = () => void stop(0);
  /**
   * Miniflare installs an exit hook that exits the process on SIGINT/SIGTERM as soon as workerd is disposed,
   * which would leave the pools draining unwatched. Ours stops the Worker and waits for every pool, so it
   * takes the signals alone.
   */
  const ownSignals = () => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      for (const listener of process.listeners(signal)) {
        if (listener !== onSignal) process.removeListener(signal, listener);
      }
      if (!process.listeners(signal).includes(onSignal)) process.on(signal, onSignal);
    }
  };
  ownSignals();
  onParentGone(onSignal);

  console.log(
    `starting ${withRegistry ? "a local model registry, " : ""}regional pools us, eu, ap and the edge Worker...`,
  );
  try {
    // --registry: the models come from a local S3-compatible server, as production's come from R2 or S3.
    if (withRegistry) {
      registry = await seededRegistry(modelsDir);
      modelsDir = registry.modelsDir;
    }
    const followRegistry = registry
      ? {
          extraArgs: ["--registry", registry.registry.url, "--registry-poll-ms", "1000"],
          env: { ...registry.registry.env, MODEL_PUBLIC_KEY: registry.publicKey },
        }
      : undefined;
    // allSettled: when one pool fails to start, the others that did are stopped too (they hold their ports).
    const started = await Promise.allSettled(
      LOCAL_REGIONS.map((r) =>
        startRegionalPool({
          region: r.name,
          port: ports[r.name]!,
          workers,
          modelsDir,
          env: { REGIONAL_SHARED_SECRET: secret, ADMIN_TOKEN: adminToken, ...followRegistry?.env },
          ...(followRegistry ? { extraArgs: followRegistry.extraArgs } : {}),
        }),
      ),
    );
    for (const s of started) if (s.status === "fulfilled") pools.push(s.value);
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const regions = LOCAL_REGIONS.map((r, i) => ({
      name: r.name,
      url: pools[i]!.url,
      latitude: r.latitude,
      longitude: r.longitude,
      continent: r.continent,
    }));
    edge = await startEdgeWorker({
      port: edgePort,
      modelsDir,
      memoryPlatform: !simulated,
      ...(registry ? { r2Buckets: [REGISTRY_BINDING] } : {}),
      vars: {
        REGIONS: JSON.stringify(regions),
        REGIONAL_SHARED_SECRET: secret,
        ALLOW_LOCATION_OVERRIDE: "true",
        ...(registry ? { MODEL_PUBLIC_KEY: registry.publicKey } : {}),
        ...edgeVars(),
      },
    });
    ownSignals();
    // What R2 being the registry's bucket and the Worker's cron do on Cloudflare (scripts/stack/registry-relay.ts).
    if (registry) relay = await relayRegistry(registry.registry, edge);
  } catch (err) {
    console.error(`start failed: ${(err as Error).message}`);
    await stop(1);
    return;
  }

  // What the Worker's cron trigger does on Cloudflare: probe every region, now and every minute, so routing
  // knows which regions are up (and their connections are warm) and /status/regions has results.
  const cron = () => edge?.scheduled().catch((err: Error) => console.error(`region probe failed: ${err.message}`));
  await cron();
  setInterval(cron, 60_000).unref();
  const edgeReady = await fetch(`${edge.url}/v2/health/ready`).then((r) => r.status === 200);
  const repository = readRepository(modelsDir);
  let warmed: WarmReport | undefined;
  // With keys, warming would spend a tenant's rate limit and need a key that may call every model: not done.
  const keyed = Boolean(process.env.EDGE_API_KEYS);
  if (warm && edgeReady && !keyed) {
    warmed = await warmStack({
      edgeUrl: edge.url,
      regions: LOCAL_REGIONS,
      // A large repository warms its first few models only: the rest load on their first requests.
      models: repository.slice(0, NAMED_MODELS).map((m) => ({
        name: m.config.name,
        rows: m.samples.map((s) => s.input),
        edge: m.edge !== undefined,
      })),
    });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`\nedgecascade local stack ready in ${seconds} s`);
  console.log(
    `  edge      ${edgeReady ? "ready" : "NOT READY"}  ${edge.url}/  (demo page; API ${edge.url}/v1/classify, ${edge.url}/v2)`,
  );
  console.log(
    `  regional  ready  ${LOCAL_REGIONS.map((r, i) => `${r.name} ${pools[i]!.url} (${r.place})`).join(" · ")}`,
  );
  console.log(`  models    ${modelsLine(repository, modelsDir)}`);
  console.log(`  loading   ${await loadingLine(pools[0]!.url, edge.url, repository.filter((m) => m.edge).length)}`);
  console.log(`  cron      region readiness and versions every 60 s, to KV; ${edge.url}/status/regions`);
  if (registry) {
    const r = registry.registry;
    console.log(
      `  registry  ${r.url} at ${r.endpoint} (s3rver), every model published, signed by a key made for this run; the pools and the Worker follow it.\n` +
        `            export AWS_ENDPOINT_URL_S3=${r.endpoint} AWS_ACCESS_KEY_ID=${r.env.AWS_ACCESS_KEY_ID} AWS_SECRET_ACCESS_KEY=${r.env.AWS_SECRET_ACCESS_KEY} EDGECASCADE_REGISTRY=${r.url}\n` +
        `            then: npm run model -- sign --name <m> --version <v> --signing-key ${registry.signingKeyFile} --models ${registry.modelsDir}\n` +
        `                  npm run model -- publish --name <m> --version <v> --models ${registry.modelsDir}; npm run rollout -- start ...`,
    );
  }
  console.log(
    simulated
      ? "  platform  Miniflare's Cache API and rate-limit simulations (--simulate-platform)"
      : "  platform  cache tier and rate limiter in the isolate (npm start -- --simulate-platform: Miniflare's)",
  );
  console.log(
    warmed
      ? `  warm-up   ${warmed.sent} requests through every tier in ${(warmed.ms / 1000).toFixed(1)} s${warmed.cutShort ? " (cut short at 5 s)" : ""}${warmed.refused > 0 ? `, ${warmed.refused} refused` : ""} (WARM_UP=false skips it)`
      : `  warm-up   skipped (${keyed ? "EDGE_API_KEYS is set" : "WARM_UP=false"}): the first requests pay JIT compilation in every process`,
  );
  console.log(
    `  observed  edge share, degraded answers, latency per colo, audit agreement, drift: ${edge.url}/status (observed)`,
  );
  console.log(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? `  traces    the pools export spans to ${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}; every answer names its trace in Server-Timing`
      : "  traces    every answer names its trace in Server-Timing; to follow it into the pools: npm run traces, then OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start",
  );
  console.log(
    `  probes    ${probeCommand(
      edge.url,
      process.env.EDGE_API_KEYS,
      repository.map((m) => m.config.name),
    )}`,
  );
  console.log(
    "            (10 s at 50 req/s of held-out rows: 60% cache repeats, 35% rows the edge is sure of, 5% it forwards;\n" +
      "            p95 against the 10 ms target, exit code 1 when missed: on a busy machine the tail is the neighbours')",
  );
  console.log(
    `  rollouts  ADMIN_TOKEN=<admin token> npm run rollout -- status --model <name> --pools ${pools.map((p) => p.url).join(",")}`,
  );
  if (!process.env.ADMIN_TOKEN)
    console.log(`  admin token for the pools' model control (set ADMIN_TOKEN to choose): ${adminToken}`);
  console.log("Ctrl-C stops everything.");
}

runMain(
  defineCommand({
    name: "start",
    usage: "npm start [-- --edge-port P --us-port P --eu-port P --ap-port P --simulate-platform --registry]",
    description:
      "The whole local stack: pools us, eu, ap and the edge Worker in local workerd routed to them (environment:\n" +
      "MODELS_DIR, EDGE_<VAR>, WARM_UP, ...: README.md). Ctrl-C (or SIGTERM, SIGHUP) stops everything.",
    flags: {
      "edge-port": {
        type: "number",
        placeholder: "P",
        min: 1,
        max: 65535,
        integer: true,
        default: 8787,
        env: "EDGE_PORT",
        help: "the edge Worker's port",
      },
      "us-port": {
        type: "number",
        placeholder: "P",
        min: 1,
        max: 65535,
        integer: true,
        default: 9001,
        env: "US_PORT",
        help: "the us pool's port",
      },
      "eu-port": {
        type: "number",
        placeholder: "P",
        min: 1,
        max: 65535,
        integer: true,
        default: 9002,
        env: "EU_PORT",
        help: "the eu pool's port",
      },
      "ap-port": {
        type: "number",
        placeholder: "P",
        min: 1,
        max: 65535,
        integer: true,
        default: 9003,
        env: "AP_PORT",
        help: "the ap pool's port",
      },
      "simulate-platform": {
        type: "boolean",
        help: "Miniflare's Cache API and rate-limit simulations (also SIMULATE_PLATFORM=true)",
      },
      registry: {
        type: "boolean",
        help: "serve from a local model registry (an S3-compatible server) that the pools and the Worker follow",
      },
    },
    parse: { env: process.env },
    async run(values) {
      const ports = stackPorts(values);
      const busy = await busyPorts(ports);
      if (busy.length > 0) throw new RefusedError(busy.join("\n  "));
      await main(simulatePlatform(values["simulate-platform"]), warmUp(), ports, values.registry);
      return 0;
    },
  }),
  { invocation: "npm start --", serves: true },
);
