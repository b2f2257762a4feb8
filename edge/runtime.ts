import { env as startupEnv } from "cloudflare:workers";
import { localPlatform } from "edgecascade-local-platform";
import { ServingError } from "../protocol/errors.ts";
import { importModelPublicKey, type ModelPublicKey } from "../protocol/model-signature.ts";
import { seededRandom } from "../protocol/seeded-random.ts";
import { simulationWarning } from "../tools/cli/table.ts";
import { AuditSampler } from "./audit/audit-sampler.ts";
import { ResponseCache } from "./cache/response-cache.ts";
import { type EdgeOptions, type Env, parseEnv } from "./env.ts";
import { createAuditCall, createForwarder, createRegionCall, type Forwarder } from "./forward/compose.ts";
import { RegionBook } from "./forward/region-book.ts";
import { type RegionTransport, regionTransport } from "./forward/region-transport.ts";
import type { RegionDispatch } from "./forward/types.ts";
import { warmProbe } from "./forward/warm-probe.ts";
import type { EdgeVariant } from "./inference/edge-variant.ts";
import { createOrtSession } from "./inference/ort-workerd.ts";
import { replacementRate, SessionPool } from "./inference/session-pool.ts";
import type { TenantLimits } from "./middleware/rate-limit.ts";
import { BUNDLED_NAMES, bundledModels } from "./models/bundled.ts";
import { ModelCatalog } from "./models/catalog.ts";
import type { ModelSource, ServedModel } from "./models/served-model.ts";
import { platformSpan } from "./observe/platform-span.ts";
import { type EdgeTrace, requestTrace } from "./observe/trace-context.ts";
import { TraceIds } from "./observe/trace-ids.ts";
import type { RegionStatusReport } from "./region-status/check.ts";
import { checkRegions } from "./region-status/check.ts";
import { RegionStatusStore } from "./region-status/store.ts";
import { requestBudgetMs } from "./regions/budget.ts";
import type { RequestLocation } from "./regions/region.ts";
import { EdgeRegistry } from "./registry/edge-registry.ts";
import { ServedViewStore } from "./registry/served-view-store.ts";
import { RequestCounts } from "./request-counts/counts.ts";
import { type QuotaObject, TenantQuotas } from "./tenants/tenant-quotas.ts";

/**
 * Everything one isolate keeps between requests: parsed options, the served models (each with its edge
 * variant and the full model version it believes the regions serve), the response cache, the rate limiter,
 * what it has learnt about the regions, and its request counts.
 */
export class EdgeRuntime {
  readonly options: EdgeOptions;
  readonly models: ModelCatalog;
  readonly cache: ResponseCache;
  readonly book: RegionBook;
  readonly forward: Forwarder;
  readonly statusStore: RegionStatusStore;
  readonly counts: RequestCounts;
  /** The key edge models must be signed with (MODEL_PUBLIC_KEY); undefined: unsigned models load. */
  readonly publicKey: Promise<ModelPublicKey> | undefined;
  /** How the forward, the warm probes and the region status check reach each region. */
  readonly send: RegionTransport;
  /** Per-client rate limit: the RATE_LIMITER binding, or the in-isolate one of LOCAL_PLATFORM "memory". */
  readonly rateLimiter: RateLimit | undefined;
  /** The tenants' own limits (`TENANTS`): per-location bindings keyed by tenant, and global quotas with leases. */
  readonly tenantLimits: TenantLimits;
  /** The model registry this isolate follows (MODEL_REGISTRY and REGION_STATUS bound), if any. */
  readonly registry: EdgeRegistry | undefined;
  /**
   * Where each request's and audit's data point goes (edge/analytics/): the ANALYTICS binding (Workers
   * Analytics Engine), or the in-isolate dataset of LOCAL_PLATFORM "memory"; none without either.
   */
  readonly analytics: AnalyticsEngineDataset | undefined;
  /** Which edge answers are audited (AUDIT_SHARE, AUDIT_MAX_PER_SECOND). */
  readonly auditSampler: AuditSampler;
  /** The audit's draw: seeded with AUDIT_SEED, else Math.random. */
  readonly auditDraw: () => number;
  /** An audit's call to a region: no hedge, breaker or observe layer (forward/compose.ts). */
  readonly auditCall: RegionDispatch;
  readonly #traceIds = new TraceIds();
  /** The edge variants' sessions within EDGE_SESSION_MEMORY_MB. */
  readonly sessions: SessionPool;

  constructor(
    options: EdgeOptions,
    sources: readonly ModelSource[],
    platform: {
      shared: Pick<Cache, "match" | "put"> | undefined;
      regionStatus?: KVNamespace;
      rateLimiter?: RateLimit;
      /** A binding by name (the tenants' rate limiters). */
      binding?: (name: string) => unknown;
      /** The tenant's quota object (TENANT_QUOTA). */
      quotaObject?: (tenant: string) => QuotaObject;
      modelRegistry?: R2Bucket;
      analytics?: AnalyticsEngineDataset;
    },
    send: RegionTransport,
    publicKey?: Promise<ModelPublicKey>,
    sessions = sessionPoolOf(options),
  ) {
    const { shared, regionStatus, rateLimiter, analytics } = platform;
    this.sessions = sessions;
    this.options = options;
    this.rateLimiter = rateLimiter;
    const limiters = new Map<string, RateLimit>();
    for (const policy of options.tenantPolicies.values()) {
      if (policy.rateLimiter) limiters.set(policy.tenant, platform.binding?.(policy.rateLimiter) as RateLimit);
    }
    this.tenantLimits = {
      limiters,
      quotas: new TenantQuotas(options.tenantPolicies, platform.quotaObject, {
        slice: options.quotaSlice,
        leaseMs: options.quotaLeaseS * 1000,
        timeoutMs: options.quotaTimeoutMs,
      }),
    };
    this.analytics = analytics;
    this.auditSampler = new AuditSampler(options.auditShare, options.auditMaxPerSecond);
    this.auditDraw = options.auditSeed === undefined ? Math.random : seededRandom(options.auditSeed);
    this.auditCall = createAuditCall({ sharedSecret: options.sharedSecret, send });
    this.send = send;
    this.publicKey = publicKey;
    this.models = new ModelCatalog(sources);
    this.counts = new RequestCounts(this.models.names, Date.now());
    this.cache = new ResponseCache({
      ttlS: options.cacheTtlS,
      maxEntries: options.cacheEntries,
      maxBytes: options.cacheBytes,
      shared,
    });
    this.book = new RegionBook(options.regions, {
      breaker: {
        failures: options.breakerFailures,
        cooldownMs: options.breakerCooldownMs,
        maxCooldownMs: options.breakerMaxCooldownMs,
      },
      hedgeDefaultMs: options.hedgeDelayMs,
      hedgeBudgetRatio: options.hedgeBudgetRatio,
      hedgeBudgetBurst: options.hedgeBudgetBurst,
      warmProbeIntervalMs: options.warmProbeIntervalMs,
      reachQuantile: options.reachQuantile,
      // A warm probe's two calls each end by REGION_CHECK_TIMEOUT_MS.
      warmProbeLostAfterMs: options.warmProbeIntervalMs + 2 * options.regionCheckTimeoutMs,
    });
    this.forward = createForwarder({ book: this.book, sharedSecret: options.sharedSecret, send });
    this.#regionCall = createRegionCall({ book: this.book, sharedSecret: options.sharedSecret, send });
    this.statusStore = new RegionStatusStore(regionStatus, options.regionStatusMemoMs);
    this.registry =
      platform.modelRegistry && regionStatus
        ? new EdgeRegistry({
            bucket: platform.modelRegistry,
            prefix: options.modelRegistryPrefix,
            store: new ServedViewStore(regionStatus, options.regionStatusMemoMs),
            models: this.models,
            publicKey,
            createSession: createOrtSession,
            pool: sessions,
          })
        : undefined;
  }

  #seen: RegionStatusReport | null = null;
  /** One region's call without the hedge, for warm probes. */
  readonly #regionCall: RegionDispatch;

  /**
   * Raise served versions and take newer rollout states from a region status report, once per report (request isolates
   * reread a memoised one). Its readiness orders regions (serve.ts); nothing in it feeds the reach estimate.
   */
  #see(report: RegionStatusReport | null): void {
    if (report === this.#seen) return;
    this.#seen = report;
    for (const region of report?.regions ?? []) {
      for (const [model, version] of Object.entries(region.versions ?? {})) this.models.get(model)?.seeVersion(version);
      for (const [model, rollout] of Object.entries(region.rollouts ?? {})) this.models.get(model)?.seeRollout(rollout);
    }
  }

  /**
   * A request's trace (edge/observe/trace-context.ts): the client's `traceparent`, else the Worker's own span
   * where Workers tracing traces the request, else one started here and sampled at TRACE_SAMPLE_RATIO.
   */
  trace(
    traceparent: string | null | undefined,
    tracestate: string | null | undefined,
    ctx?: ExecutionContext,
  ): EdgeTrace {
    return requestTrace({
      traceparent,
      tracestate,
      platform: () => platformSpan(ctx),
      newIds: () => this.#traceIds.next(),
      sample: () => Math.random() < this.options.traceSampleRatio,
    });
  }

  /** What `/v2` and `/status` say about model signatures: required (with the key's id) or not verified. */
  async modelSignatures(): Promise<{ required: true; key: string } | { required: false }> {
    return this.publicKey ? { required: true, key: (await this.publicKey).id } : { required: false };
  }

  /** A request's budget in ms from its `x-edgecascade-budget-ms` (regions/budget.ts); 400 for a malformed one. */
  budgetMs(header: string | null | undefined): number {
    return requestBudgetMs(header, { defaultMs: this.options.sloBudgetMs, maxMs: this.options.maxBudgetMs });
  }

  /**
   * A run of `served`'s edge variant failed: logged with the model, the variant's version and the reason, and
   * counted (`/status`: `edgeFailed`). The request goes on without it (a region, or a 503 saying why).
   */
  edgeModelFailed(served: ServedModel, variant: EdgeVariant, reason: string): void {
    this.counts.edgeFailed(served.name);
    console.warn(
      `edge model ${variant.config.name} version ${variant.version} (model ${served.name}) failed: ${reason}`,
    );
  }

  /** The cascade threshold of a model's edge variant: `CASCADE_THRESHOLDS`' entry, else the calibrated one. */
  threshold(served: ServedModel): number | undefined {
    return this.options.cascadeThresholds[served.name] ?? served.edge?.calibration.threshold;
  }

  /** The latest stored region status report; its versions raise the models' served versions, its readiness orders regions. */
  latestRegionStatus(now: number): RegionStatusReport | null | Promise<RegionStatusReport | null> {
    const read = this.statusStore.read(now);
    // The registry's served state comes with it, from the same KV namespace and as often (REGION_STATUS_MEMO_MS).
    const served = this.registry?.read(now);
    if (served instanceof Promise) return Promise.all([read, served]).then(([report]) => this.#seeReport(report));
    if (!(read instanceof Promise)) {
      this.#see(read);
      return read;
    }
    return read.then((report) => this.#seeReport(report));
  }

  #seeReport(report: RegionStatusReport | null): RegionStatusReport | null {
    this.#see(report);
    return report;
  }

  /**
   * Warm probes (edge/forward/warm-probe.ts) of those of `regions` that are due one from `location`'s place
   * (regions/warm-probe-due.ts), for `waitUntil`: never rejects. Undefined when none is due.
   */
  warmProbes(
    regions: readonly string[],
    served: ServedModel,
    now: number,
    location?: RequestLocation,
  ): Promise<void> | undefined {
    const due = regions.filter((name) => this.book.claimWarmProbe(name, now, location));
    if (due.length === 0) return undefined;
    const options = {
      timeoutMs: this.options.regionCheckTimeoutMs,
      sharedSecret: this.options.sharedSecret,
      send: this.send,
      call: this.#regionCall,
      model: { name: served.name, width: served.io.width, classes: served.io.classes },
      location,
    };
    return Promise.all(
      due.map(async (name) => {
        await warmProbe(this.options.regions.find((r) => r.name === name)!, options);
        this.book.warmProbeEnded(name, location);
      }),
    ).then(() => undefined);
  }

  /** The scheduled region status check: check every region and store the report for the request isolates of every colo. */
  async checkRegions(): Promise<RegionStatusReport> {
    const report = await checkRegions(this.options.regions, {
      models: this.models.names,
      timeoutMs: this.options.regionCheckTimeoutMs,
      sharedSecret: this.options.sharedSecret,
      send: this.send,
    });
    await this.statusStore.write(report);
    this.#see(report);
    const followed = this.models.all().map((m) => ({ name: m.name, ...(m.edge ? { edge: m.edge.config.name } : {}) }));
    await this.registry?.refresh(followed, Date.now());
    return report;
  }
}

/**
 * The isolate's options, read once as it starts, from the bindings the Worker is given at module scope (before
 * any request, and under `wrangler check startup`). A bad variable is logged there, once, with a message naming
 * it; every request then answers 500 with that message, without reading the environment again.
 */
const configuration = configure(startupEnv as Env);

function configure(env: Env): { options: EdgeOptions } | { failure: ServingError } {
  try {
    const { options, simulating } = parseEnv(env, BUNDLED_NAMES);
    if (options.localPlatform && !localPlatform) {
      throw new Error(
        `LOCAL_PLATFORM: this bundle is a deployed environment's, without the local stand-ins of edge/local/; unset it`,
      );
    }
    const simulation = simulationWarning(simulating);
    if (simulation) console.warn(simulation);
    return { options };
  } catch (err) {
    const message = `the Worker's configuration is invalid: ${(err as Error).message}`;
    console.error(message);
    return { failure: new ServingError(500, "bad_configuration", message) };
  }
}

const runtimes = new WeakMap<Env, EdgeRuntime>();

/** The isolate's sessions: EDGE_SESSION_MEMORY_MB, and EDGE_SESSION_REPLACEMENTS_PER_SECOND past it. */
function sessionPoolOf(options: EdgeOptions): SessionPool {
  return new SessionPool(
    options.edgeSessionMemoryMb * 2 ** 20,
    replacementRate(options.edgeSessionReplacementsPerSecond),
  );
}

/** The isolate's runtime for these bindings, built on first use from the options read at start-up. */
export function runtimeFor(env: Env): EdgeRuntime {
  let runtime = runtimes.get(env);
  if (!runtime) {
    if ("failure" in configuration) throw configuration.failure;
    const { options } = configuration;
    // LOCAL_PLATFORM "memory" is refused at start-up by a bundle without the stand-ins (`configure`).
    const local = options.localPlatform === "memory" ? localPlatform : undefined;
    const shared = options.localCacheOnly
      ? undefined
      : local
        ? local.cache()
        : typeof caches === "undefined"
          ? undefined
          : caches.default;
    const rateLimiter = local
      ? options.localRateLimit > 0
        ? local.rateLimit(options.localRateLimit, options.rateLimitPeriodS)
        : undefined
      : env.RATE_LIMITER;
    const publicKey = options.modelPublicKey ? importModelPublicKey(options.modelPublicKey) : undefined;
    if (!publicKey) {
      console.warn(
        "MODEL SIGNATURES NOT VERIFIED: this Worker loads unsigned edge models (no MODEL_PUBLIC_KEY var); " +
          "their files are only checked against config.json's sha256",
      );
    }
    // Miniflare discards Analytics Engine writes: locally the points stay in the isolate (edge/local/).
    const analytics = local ? local.analytics() : env.ANALYTICS;
    const sessions = sessionPoolOf(options);
    runtime = new EdgeRuntime(
      options,
      bundledModels(sessions, publicKey),
      {
        shared,
        regionStatus: env.REGION_STATUS,
        rateLimiter,
        analytics,
        binding: (name) => (env as unknown as Record<string, unknown>)[name],
        quotaObject: env.TENANT_QUOTA
          ? (tenant) => {
              const namespace = env.TENANT_QUOTA!;
              return namespace.get(namespace.idFromName(tenant)) as unknown as QuotaObject;
            }
          : undefined,
        modelRegistry: env.MODEL_REGISTRY,
      },
      regionTransport(options.regions, env),
      publicKey,
      sessions,
    );
    runtimes.set(env, runtime);
  }
  return runtime;
}
