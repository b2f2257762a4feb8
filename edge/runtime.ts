import type { ModelSignature } from "../protocol/model-config.ts";
import { ResponseCache } from "./cache/response-cache.ts";
import { newerVersion } from "./cascade/served-version.ts";
import { type EdgeOptions, type Env, parseEnv } from "./env.ts";
import { createForwarder, type Forwarder } from "./forward/compose.ts";
import { RegionBook } from "./forward/region-book.ts";
import { bundledEdgeModel } from "./inference/bundled-model.ts";
import type { EdgeModel } from "./inference/edge-model.ts";
import type { ProbeReport } from "./probe/probe.ts";
import { probeRegions } from "./probe/probe.ts";
import { ProbeStore } from "./probe/store.ts";

/**
 * Everything one isolate keeps between requests: parsed options, the edge model, the response cache,
 * what it has learnt about the regions and the full model version it believes they serve.
 */
export class EdgeRuntime {
  readonly options: EdgeOptions;
  readonly model: EdgeModel;
  readonly cache: ResponseCache;
  readonly book: RegionBook;
  readonly forward: Forwarder;
  readonly probes: ProbeStore;
  /** The logical model clients name; the edge model stands in for it. */
  readonly modelName: string;
  /** The edge model's tensors under the logical model's name (what validation messages say). */
  readonly signature: ModelSignature;
  /** The cascade threshold in use: `CASCADE_THRESHOLDS`' entry for the model, else the calibrated one. */
  readonly threshold: number;
  #servedVersion: string;

  constructor(options: EdgeOptions, model: EdgeModel, shared: Cache | undefined) {
    this.options = options;
    this.model = model;
    this.modelName = model.calibration.against.model;
    this.signature = { ...model.signature, name: this.modelName };
    this.#servedVersion = model.calibration.against.version;
    for (const name of Object.keys(options.cascadeThresholds)) {
      if (name !== this.modelName)
        throw new Error(`CASCADE_THRESHOLDS: the edge serves no model "${name}" (it serves "${this.modelName}")`);
    }
    this.threshold = options.cascadeThresholds[this.modelName] ?? model.calibration.threshold;
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
    });
    this.forward = createForwarder({
      book: this.book,
      sharedSecret: options.sharedSecret,
      classes: model.signature.classes,
    });
    this.probes = new ProbeStore(shared, options.probeMemoMs);
  }

  /** The full model version the edge believes the regions serve; part of every cache key. */
  get servedVersion(): string {
    return this.#servedVersion;
  }

  /** A region answered with (or a probe saw) `version`; the served version only moves forward. */
  seeVersion(version: string | undefined): void {
    this.#servedVersion = newerVersion(this.#servedVersion, version);
  }

  /** The latest stored probe report; its versions raise the served version, its round trips feed routing. */
  async latestProbe(now: number): Promise<ProbeReport | null> {
    const report = await this.probes.read(now);
    if (report) this.#see(report);
    return report;
  }

  #see(report: ProbeReport): void {
    for (const region of report.regions) this.seeVersion(region.version);
    this.book.seeProbe(report);
  }

  /** The scheduled probe: check every region and store the report for the request isolates. */
  async probe(): Promise<ProbeReport> {
    const report = await probeRegions(this.options.regions, {
      model: this.modelName,
      timeoutMs: this.options.probeTimeoutMs,
      sharedSecret: this.options.sharedSecret,
    });
    await this.probes.write(report);
    this.#see(report);
    return report;
  }
}

const runtimes = new WeakMap<Env, EdgeRuntime>();

/** The isolate's runtime for these bindings, built (and the environment checked) on first use. */
export function runtimeFor(env: Env): EdgeRuntime {
  let runtime = runtimes.get(env);
  if (!runtime) {
    const shared = typeof caches === "undefined" ? undefined : caches.default;
    runtime = new EdgeRuntime(parseEnv(env), bundledEdgeModel, shared);
    runtimes.set(env, runtime);
  }
  return runtime;
}
