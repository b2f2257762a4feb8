import { fileURLToPath } from "node:url";
import {
  convertV4MiniflareOptions,
  Log,
  LogLevel,
  Miniflare,
  type V4WorkerOptions,
  type V4WorkerOptionsShape,
} from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { edgeBundle, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { type ExternalService, loopbackRegionBindings } from "./region-bindings.ts";

/** The Worker's name in Miniflare (the first instance; the others are `-2`, `-3`, ...). */
export const WORKER_NAME = "edgecascade";
/** The stand-in for an unreachable TENANT_QUOTA (`quotaObject: "failing"`). */
const FAILING_QUOTA = "failing-quota";

export interface EdgeWorkerOptions {
  /** Port on 127.0.0.1 for the Worker's own socket. Default 0: a free port. */
  port?: number;
  /** Vars and secrets, over wrangler.toml's `[vars]` of `env` (e.g. REGIONS, SLO_BUDGET_MS, API_KEYS). */
  vars?: Record<string, string>;
  /** Directory where the Cache API and KV persist between runs (Miniflare's `resourcePersistencePath`). Default: in memory. */
  persistDir?: string;
  /** `request.cf` of requests arriving on the socket (dispatchFetch may pass its own). Default: none. */
  cf?: Record<string, unknown>;
  /** wrangler environment whose vars and bindings to start from. Default: the top level (the local stack). */
  env?: string;
  /** Replace the RATE_LIMITER binding (`{limit, period}`), or remove it (`false`). Default: wrangler.toml's. */
  rateLimit?: { limit: number; period: 10 | 60 } | false;
  /** Other rate-limiting bindings by name, added or replacing wrangler.toml's (e.g. TENANT_RATE_LIMITER). */
  rateLimits?: Record<string, { limit: number; period: 10 | 60 }>;
  /**
   * Run this many instances of the Worker, each its own isolate, sharing the Durable Objects of the first (a
   * tenant's quota seen from several isolates); `instance(i)` reaches the i-th. Default 1.
   */
  instances?: number;
  /**
   * `failing`: TENANT_QUOTA is bound to a stand-in whose every call throws, as an unreachable Durable Object would
   * (`failing-quota-worker.js`); the edge must fail open. Default: the Worker's own TenantQuota, in Miniflare.
   */
  quotaObject?: "own" | "failing";
  /** Worker console output at or above this level is printed. Default WARN. */
  logLevel?: LogLevel;
  /** Every line the Worker logs (its console), to this function instead of the terminal. */
  onLog?: (level: string, message: string) => void;
  /**
   * Keep the response cache's shared tier and the rate limiter in the isolate (LOCAL_PLATFORM "memory",
   * edge/local/) instead of Miniflare's SQLite-backed Cache API and rate-limit simulations, which cost the
   * local stack milliseconds per request that Cloudflare does not. `npm start` sets it unless run with
   * `--simulate-platform`. Default false (the simulations).
   */
  memoryPlatform?: boolean;
  /** Model repository whose models the Worker serves. Default: the repository's `models/`. */
  modelsDir?: string;
  /**
   * Reach loopback regions through `external` service bindings (region-bindings.ts) rather than global
   * fetch, which Miniflare routes through an extra Worker of its own. Default true.
   */
  regionBindings?: boolean;
  /**
   * Miniflare's Cache API simulation (on-disk storage behind an entry Worker of its own). `false` makes
   * `caches.default` a no-op, as it is on workers.dev. Default true.
   */
  cacheApi?: boolean;
  /**
   * Serve `url` from a socket straight into the Worker (Miniflare's `unsafeDirectSockets`) instead of Miniflare's
   * own port, where a JavaScript entry Worker of Miniflare's copies every request and response on its way: about
   * 120 µs of workerd CPU per request here (bench:edge), which Cloudflare's runtime does not run. `request.cf` is
   * then absent. Default false.
   */
  directSocket?: boolean;
  /** R2 buckets to bind, by binding name (the model registry's: `MODEL_REGISTRY`), in Miniflare's own storage. */
  r2Buckets?: string[];
  /**
   * Open workerd's V8 inspector on this port (Miniflare's `inspectorPort`): benchmarks read the isolate's heap
   * through it (`isolateHeap`, isolate-heap.ts). Default: closed.
   */
  inspectorPort?: number;
}

export interface EdgeWorker {
  /** `http://127.0.0.1:<port>` */
  url: string;
  dispatchFetch: Miniflare["dispatchFetch"];
  /** The `i`-th instance's fetch (`instances`); 0 is the one `url` and `dispatchFetch` reach. */
  instance(i: number): Promise<(url: string, init?: RequestInit) => Promise<Response>>;
  /** Run the Worker's scheduled handler (the cron's region probe) once and wait for it. */
  scheduled(): Promise<void>;
  miniflare: Miniflare;
  dispose(): Promise<void>;
}

/**
 * The edge Worker in local workerd: the wrangler bundle (built once per process, see build-edge.ts) run
 * by Miniflare on its own socket with every module listed, not through wrangler's dev proxy. Bindings
 * start from wrangler.toml (vars, the rate limiter) so that local runs match the config that deploys.
 */
export async function startEdgeWorker(options: EdgeWorkerOptions = {}): Promise<EdgeWorker> {
  const bundle = await edgeBundle(options.modelsDir);
  // wrangler types these options as an Omit<> of miniflare's v4 shape, whose index signature erases every named
  // field to `unknown`; they are that shape.
  const fromToml = unstable_getMiniflareWorkerOptions(`${ROOT}/wrangler.toml`, options.env)
    .workerOptions as V4WorkerOptionsShape;
  const toml = { ...(fromToml.ratelimits ?? {}) } as Record<string, unknown>;
  if (options.rateLimit === false) delete toml.RATE_LIMITER;
  else if (options.rateLimit) toml.RATE_LIMITER = { namespace_id: "1001", simple: options.rateLimit };
  for (const [name, simple] of Object.entries(options.rateLimits ?? {})) {
    toml[name] = { namespace_id: `local-${name}`, simple };
  }
  const configured = toml as NonNullable<typeof fromToml.ratelimits>;
  const bindings: Record<string, unknown> = { ...fromToml.bindings, ...options.vars };
  let ratelimits: typeof configured = configured;
  if (options.memoryPlatform) {
    // The same limit, counted in the isolate; the binding is left out so that nothing calls the simulation.
    const limit = (configured as Record<string, { simple?: { limit: number } }>).RATE_LIMITER?.simple?.limit ?? 0;
    bindings.LOCAL_PLATFORM = "memory";
    bindings.LOCAL_RATE_LIMIT ??= String(limit); // unless the caller set its own (`EDGE_LOCAL_RATE_LIMIT=0`: none)
    ratelimits = {};
  }
  let serviceBindings: Record<string, ExternalService> = {};
  if (options.regionBindings !== false) {
    const bound = loopbackRegionBindings(bindings.REGIONS);
    bindings.REGIONS = bound.regions;
    serviceBindings = bound.serviceBindings;
  }
  // The first instance runs the Worker's own Durable Objects (TENANT_QUOTA, Miniflare's, in memory unless persistDir
  // is set); other instances bind the same ones.
  const durableObjects = (fromToml.durableObjects ?? {}) as Record<string, { className: string }>;
  const failing = options.quotaObject === "failing";
  const boundTo = (scriptName: string | undefined) =>
    Object.fromEntries(
      Object.entries(durableObjects).map(([binding, d]) => [
        binding,
        failing
          ? { className: "TenantQuota", scriptName: FAILING_QUOTA }
          : { ...d, ...(scriptName ? { scriptName } : {}) },
      ]),
    );
  const worker = {
    modules: bundle.modules,
    modulesRoot: bundle.dir,
    compatibilityDate: fromToml.compatibilityDate,
    compatibilityFlags: fromToml.compatibilityFlags,
    bindings,
    serviceBindings,
    ratelimits,
    // REGION_STATUS: the cron's report, in Miniflare's own KV (in memory unless persistDir is set).
    kvNamespaces: fromToml.kvNamespaces,
    // The model registry's bucket (MODEL_REGISTRY), in Miniflare's own R2, when asked for.
    ...(options.r2Buckets ? { r2Buckets: options.r2Buckets } : {}),
    // Miniflare's outbound Worker removes CF-Connecting-IP from global fetches, as Cloudflare does for
    // subrequests; the forward never sends that header. (The Worker itself stays on the path of every global
    // fetch: regions are reached through service bindings instead, above.)
    stripCfConnectingIp: false,
    cacheAPI: options.cacheApi ?? true,
  };
  const instances = Math.max(1, options.instances ?? 1);
  const workers = [
    {
      ...worker,
      name: WORKER_NAME,
      durableObjects: boundTo(undefined),
      ...(options.directSocket ? { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] } : {}),
    },
    ...Array.from({ length: instances - 1 }, (_, i) => ({
      ...worker,
      name: `${WORKER_NAME}-${i + 2}`,
      durableObjects: boundTo(WORKER_NAME),
    })),
    ...(failing
      ? [
          {
            name: FAILING_QUOTA,
            modules: true,
            scriptPath: fileURLToPath(new URL("./failing-quota-worker.js", import.meta.url)),
            compatibilityDate: fromToml.compatibilityDate,
            durableObjects: { UNUSED: { className: "TenantQuota", useSQLite: true } },
          },
        ]
      : []),
  ];
  // wrangler hands over miniflare's v4 worker options; miniflare 5 takes its own shape, converted here.
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      workers: workers as V4WorkerOptions[],
      host: "127.0.0.1",
      port: options.port ?? 0,
      cf: options.cf ?? {},
      ...(options.inspectorPort !== undefined ? { inspectorPort: options.inspectorPort } : {}),
      // Miniflare 5 keeps every resource (Cache API, KV) under one root; the conversion drops v4's per-plugin
      // `cachePersist` / `kvPersist` without a word, so they would leave everything in memory.
      ...(options.persistDir ? { resourcePersistencePath: options.persistDir } : {}),
      log: new Log(options.logLevel ?? LogLevel.WARN),
      ...(options.onLog ? { handleStructuredLogs: ({ level, message }) => options.onLog!(level, message) } : {}),
    }),
  );
  try {
    const ready = await miniflare.ready;
    const url = (options.directSocket ? await miniflare.unsafeGetDirectURL() : ready).toString().replace(/\/$/, "");
    return {
      url,
      dispatchFetch: miniflare.dispatchFetch.bind(miniflare),
      async instance(i) {
        const fetcher = await miniflare.getWorker(i === 0 ? WORKER_NAME : `${WORKER_NAME}-${i + 1}`);
        return (url, init) => fetcher.fetch(url, init as never) as unknown as Promise<Response>;
      },
      async scheduled() {
        const worker = await miniflare.getWorker();
        const result = await worker.scheduled({ cron: "* * * * *" });
        if (result.outcome !== "ok") throw new Error(`scheduled handler ended with ${result.outcome}`);
      },
      miniflare,
      dispose: () => miniflare.dispose(),
    };
  } catch (err) {
    await miniflare.dispose();
    throw err;
  }
}
