import type { BreakerOptions, CallOutcome, RegionBreaker } from "../regions/breaker-policy.ts";
import { breakerAdmit, breakerAllows, breakerRecord, CLOSED } from "../regions/breaker-policy.ts";
import { type HedgeBudget, hedgeBudgetEarn, hedgeBudgetSpend, hedgeDelay } from "../regions/hedge-policy.ts";
import { LatencyWindow } from "../regions/latency-window.ts";
import type { RegionHealth } from "../regions/order.ts";
import { priorRoundTripMs } from "../regions/prior.ts";
import { type AnswerSample, expectedAnswerMs } from "../regions/reach.ts";
import type { Region, RequestLocation } from "../regions/region.ts";
import { warmProbeDue } from "../regions/warm-probe-due.ts";

/** Per-region call counts of this isolate, for /status/regions. */
export interface RegionCounters {
  /** Calls the breaker let through. */
  admitted: number;
  answered: number;
  failed: number;
  timedOut: number;
  /** Aborted because another region answered first. */
  cancelled: number;
  /** Answered that it does not serve the version the client pinned (404, or another version). */
  wrongVersion: number;
  /** Answered that it does not serve the model now (503 `model_not_ready`) while it serves its others. */
  modelUnavailable: number;
  /** Refused by the open breaker, never sent. */
  refused: number;
  /** Not sent: expected to answer later than what was left of the budget (budget-aware routing). */
  tooFar: number;
  /** Calls that were hedges. */
  hedges: number;
  /** Warm probes sent (edge/forward/warm-probe.ts), each two GETs. */
  warmProbes: number;
}

export interface RegionBookOptions {
  breaker: BreakerOptions;
  /** Hedge delay before a region has enough samples, in ms. */
  hedgeDefaultMs: number;
  hedgeBudgetRatio: number;
  hedgeBudgetBurst: number;
  /** Least time between two warm probes of one region, in ms (regions/warm-probe-due.ts). */
  warmProbeIntervalMs: number;
  /** After this long a warm probe that has not reported counts as lost, in ms. */
  warmProbeLostAfterMs: number;
  /** Which quantile of a region's answer times the reach estimate takes (regions/reach.ts). Default 0.5. */
  reachQuantile?: number;
}

/** Answer times kept per region for the reach estimate. */
const SAMPLES = 20;

interface Entry {
  region: Region;
  breaker: RegionBreaker;
  latency: LatencyWindow;
  /** The latest answer times (and deadline cut-offs), oldest first: the reach estimate's evidence. */
  samples: AnswerSample[];
  warm: { sentAt?: number; inFlight: boolean };
  counters: RegionCounters;
}

function expectedForStatus(ms: number | undefined): number | "cut-off" | null {
  if (ms === undefined) return null;
  return Number.isFinite(ms) ? Math.round(ms * 10) / 10 : "cut-off";
}

/**
 * What one isolate knows about each region: its breaker, its recent latencies (the hedge delay), the evidence
 * of the answer time to expect (its own answers and warm probes; regions/reach.ts) and call counts, plus the
 * shared hedge budget. Isolates do not share this: each learns from its own calls where it runs, which is how
 * Envoy's outlier detection works per proxy as well. The policies it applies are pure (regions/).
 */
export class RegionBook {
  readonly #entries = new Map<string, Entry>();
  readonly #options: RegionBookOptions;
  #budget: HedgeBudget;

  constructor(regions: readonly Region[], options: RegionBookOptions) {
    this.#options = options;
    this.#budget = { tokens: options.hedgeBudgetBurst };
    for (const region of regions) {
      this.#entries.set(region.name, {
        region,
        breaker: CLOSED,
        latency: new LatencyWindow(),
        samples: [],
        warm: { inFlight: false },
        counters: {
          admitted: 0,
          answered: 0,
          failed: 0,
          timedOut: 0,
          cancelled: 0,
          wrongVersion: 0,
          modelUnavailable: 0,
          refused: 0,
          tooFar: 0,
          hedges: 0,
          warmProbes: 0,
        },
      });
    }
  }

  #entry(name: string): Entry {
    const entry = this.#entries.get(name);
    if (!entry) throw new Error(`unknown region ${name}`);
    return entry;
  }

  /** Ask the region's breaker for a call (admitting the half-open trial call changes its state). */
  admit(name: string, now: number): boolean {
    const entry = this.#entry(name);
    const { admit, breaker } = breakerAdmit(entry.breaker, now);
    entry.breaker = breaker;
    if (admit) entry.counters.admitted++;
    else entry.counters.refused++;
    return admit;
  }

  /** How an admitted call ended, for the breaker. */
  record(name: string, outcome: CallOutcome, now: number): void {
    const entry = this.#entry(name);
    entry.breaker = breakerRecord(entry.breaker, outcome, now, this.#options.breaker);
  }

  /**
   * Count an outcome. An answer's latency goes to the hedge delay's window and, with a deadline cut-off's wait
   * (the region took at least that long), to the reach evidence.
   */
  observe(
    name: string,
    outcome: "answered" | "failed" | "timedOut" | "cancelled" | "wrongVersion" | "modelUnavailable",
    ms?: number,
    { warmProbe = false, now = Date.now() }: { warmProbe?: boolean; now?: number } = {},
  ): void {
    const entry = this.#entry(name);
    entry.counters[outcome]++;
    if (ms === undefined || (outcome !== "answered" && outcome !== "timedOut")) return;
    if (outcome === "answered" && !warmProbe) entry.latency.push(ms);
    const sample: AnswerSample = { ms, at: now };
    if (outcome === "timedOut") sample.cutOff = true;
    if (warmProbe) sample.warmProbe = true;
    entry.samples.push(sample);
    if (entry.samples.length > SAMPLES) entry.samples.shift();
  }

  countHedge(name: string): void {
    this.#entry(name).counters.hedges++;
  }

  countTooFar(name: string): void {
    this.#entry(name).counters.tooFar++;
  }

  /**
   * Claim the region's next warm probe if one is due (regions/warm-probe-due.ts); the caller sends it (its
   * answer time reaches `observe` through the forwarding layers) and says when it ended with `warmProbeEnded`.
   */
  claimWarmProbe(name: string, now: number): boolean {
    const entry = this.#entry(name);
    const { warmProbeIntervalMs, warmProbeLostAfterMs } = this.#options;
    if (!warmProbeDue(entry.warm, now, warmProbeIntervalMs, warmProbeLostAfterMs)) return false;
    entry.warm = { sentAt: now, inFlight: true };
    entry.counters.warmProbes++;
    return true;
  }

  warmProbeEnded(name: string): void {
    const entry = this.#entry(name);
    entry.warm = { ...entry.warm, inFlight: false };
  }

  /**
   * The answer time to expect from the region for a request from `location` (regions/reach.ts: this
   * isolate's own evidence, else the distance prior); undefined when unknown.
   */
  expectedAnswerMs(name: string, location?: RequestLocation): number | undefined {
    const { region, samples } = this.#entry(name);
    return expectedAnswerMs({ samples, priorMs: priorRoundTripMs(location, region) }, this.#options.reachQuantile);
  }

  /** How long to wait for this region before hedging: its observed p95, or the configured default. */
  hedgeDelay(name: string): number {
    return hedgeDelay(this.#entry(name).latency.values(), { defaultMs: this.#options.hedgeDefaultMs });
  }

  /** Every forwarded request earns a fraction of a hedge. */
  earnHedge(): void {
    this.#budget = hedgeBudgetEarn(this.#budget, this.#options.hedgeBudgetRatio, this.#options.hedgeBudgetBurst);
  }

  /** Spend a hedge if the budget has one. */
  spendHedge(): boolean {
    const { ok, budget } = hedgeBudgetSpend(this.#budget);
    this.#budget = budget;
    return ok;
  }

  /** Healthy unless the breaker would refuse a call now or the latest region status report found the region not ready. */
  health(now: number, statusReady: Readonly<Record<string, boolean>>): Record<string, RegionHealth> {
    const health: Record<string, RegionHealth> = {};
    for (const [name, entry] of this.#entries) {
      health[name] = breakerAllows(entry.breaker, now) && statusReady[name] !== false ? "healthy" : "unhealthy";
    }
    return health;
  }

  /** This isolate's view, for /status/regions. */
  snapshot() {
    return {
      hedgeTokens: Math.round(this.#budget.tokens * 100) / 100,
      regions: [...this.#entries.values()].map((e) => ({
        name: e.region.name,
        url: e.region.url,
        breaker: e.breaker,
        hedgeDelayMs: this.hedgeDelay(e.region.name),
        // Without a request there is no location, so no prior: this is the isolate's own evidence only;
        // "cut-off" while calls cut off by the deadline make up the estimate (regions/reach.ts).
        expectedAnswerMs: expectedForStatus(this.expectedAnswerMs(e.region.name)),
        lastWarmProbe: e.samples.findLast((s) => s.warmProbe) ?? null,
        latencySamples: e.latency.values().length,
        counters: { ...e.counters },
      })),
    };
  }
}
