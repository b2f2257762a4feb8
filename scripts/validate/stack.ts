import { randomBytes } from "node:crypto";
import { type EdgeWorker, startEdgeWorker } from "../stack/edge-worker.ts";
import { LOCAL_REGIONS } from "../stack/local-regions.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";
import type { DelayProxyOptions } from "./delay-proxy.ts";
import { type ProxyHandle, type ProxyPlacement, startProxyHost } from "./proxy-host.ts";

export type RegionName = (typeof LOCAL_REGIONS)[number]["name"];
export const REGION_NAMES: readonly RegionName[] = LOCAL_REGIONS.map((r) => r.name);

export interface ValidationStackOptions {
  /** One-way delay between the edge and each region, in ms. Default 0. */
  delays?: Partial<Record<RegionName, number>>;
  /** Jitter of every proxy, ± ms. Default 0. */
  jitterMs?: number;
  /** Model repository of the pools. Default: the repository's `models/`. */
  modelsDir?: string;
  /** More flags for every pool. */
  poolArgs?: string[];
  /** Where the delay proxies run (proxy-host.ts). Default `in-process`. */
  proxies?: ProxyPlacement;
}

/** The local stack with network distance: pools us/eu/ap, each behind a delay proxy; edge Workers on top. */
export interface ValidationStack {
  pools: Record<RegionName, RegionalPool>;
  proxies: Record<RegionName, ProxyHandle>;
  /** The shared secret and admin token of this run (random). */
  secret: string;
  adminToken: string;
  /** The REGIONS var: each region at its place, reached through its proxy. */
  regionsVar: string;
  /**
   * A fresh edge Worker (a new isolate, as in another colo) on this stack, with `vars` on top and `cf` as the
   * `request.cf` of every request on its socket (e.g. the client's `clientTcpRtt`); `stop` disposes it.
   */
  startEdge(vars?: Record<string, string>, cf?: Record<string, unknown>): Promise<EdgeWorker>;
  /** Set every region's one-way delay. */
  setDelays(delays: Partial<Record<RegionName, number>>): Promise<void>;
  /** Another delay proxy where the stack's run (validate:latency `--decompose`: the proxy alone), closed with it. */
  startProxy(options: DelayProxyOptions): Promise<ProxyHandle>;
  /** SIGKILL a pool (a crash: no drain). */
  kill(name: RegionName): Promise<void>;
  /** Start the region's pool again on its port, behind the same proxy. */
  restart(name: RegionName): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start pools us, eu and ap (the same processes `npm start` runs, one worker each), a delay proxy in front of
 * each, and hand out edge Workers routed through the proxies with the location override on.
 */
export async function startValidationStack(options: ValidationStackOptions = {}): Promise<ValidationStack> {
  const secret = randomBytes(24).toString("hex");
  const adminToken = randomBytes(24).toString("hex");
  const env = { REGIONAL_SHARED_SECRET: secret, ADMIN_TOKEN: adminToken };
  const poolOptions = (name: RegionName, port = 0) => ({
    region: name,
    port,
    env,
    ...(options.modelsDir ? { modelsDir: options.modelsDir } : {}),
    extraArgs: options.poolArgs ?? [],
  });
  const pools = {} as Record<RegionName, RegionalPool>;
  const proxies = {} as Record<RegionName, ProxyHandle>;
  const edges: EdgeWorker[] = [];
  const host = await startProxyHost(options.proxies ?? "in-process");
  const stop = async () => {
    await Promise.allSettled(edges.map((e) => e.dispose()));
    await host.stop();
    await Promise.allSettled(Object.values(pools).map((p) => p.stop()));
  };
  try {
    const started = await Promise.allSettled(REGION_NAMES.map((name) => startRegionalPool(poolOptions(name))));
    started.forEach((s, i) => {
      if (s.status === "fulfilled") pools[REGION_NAMES[i]!] = s.value;
    });
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    for (const name of REGION_NAMES) {
      proxies[name] = await host.start({
        target: { host: "127.0.0.1", port: pools[name].port },
        delayMs: options.delays?.[name] ?? 0,
        jitterMs: options.jitterMs ?? 0,
        seed: REGION_NAMES.indexOf(name) + 1,
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const regionsVar = JSON.stringify(
    LOCAL_REGIONS.map((r) => ({
      name: r.name,
      url: proxies[r.name].url,
      latitude: r.latitude,
      longitude: r.longitude,
      continent: r.continent,
    })),
  );

  return {
    pools,
    proxies,
    secret,
    adminToken,
    regionsVar,
    async startEdge(vars = {}, cf = undefined) {
      const edge = await startEdgeWorker({
        ...(cf ? { cf } : {}),
        // Miniflare 5 simulates two bindings at costs Cloudflare's do not have (docs/toolchain.md): the
        // rate limiter (a SQLite-backed Durable Object, ~2 ms per request here) and the Cache API's writes
        // (on-disk storage, ~4 ms each at 100 req/s, saturating near 300 writes/s). These runs measure distance
        // and faults, so they go without both; `validate:overload` measures the edge through the limiter.
        vars: {
          REGIONS: regionsVar,
          REGIONAL_SHARED_SECRET: secret,
          ALLOW_LOCATION_OVERRIDE: "true",
          LOCAL_CACHE_ONLY: "true",
          ...vars,
        },
        rateLimit: false,
      });
      edges.push(edge);
      return edge;
    },
    async setDelays(delays) {
      await Promise.all(Object.entries(delays).map(([name, ms]) => proxies[name as RegionName].setDelay(ms)));
    },
    startProxy: (proxyOptions) => host.start(proxyOptions),
    async kill(name) {
      process.kill(pools[name].pid, "SIGKILL");
      await pools[name].exited;
    },
    async restart(name) {
      pools[name] = await startRegionalPool(poolOptions(name, pools[name].port));
    },
    stop,
  };
}

/**
 * Ctrl-C (or SIGTERM) stops the stack before the process exits. Miniflare installs an exit hook that exits on
 * these signals as soon as workerd is disposed, which would leave the pools running; ours takes them alone.
 */
export function stopOnSignals(stack: ValidationStack): void {
  const onSignal = () => {
    void stack.stop().finally(() => process.exit(130));
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.removeAllListeners(signal);
    process.on(signal, onSignal);
  }
}
