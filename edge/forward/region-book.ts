import type { ProbeReport } from "../probe/probe.ts";
import {
  type BreakerOptions,
  breakerAdmit,
  breakerAllows,
  breakerRecord,
  type CallOutcome,
  CLOSED,
  type RegionBreaker,
} from "../regions/breaker.ts";
import { type HedgeBudget, hedgeBudgetEarn, hedgeBudgetSpend, hedgeDelay } from "../regions/hedge.ts";
import { LatencyWindow } from "../regions/latency-window.ts";
import type { RegionHealth } from "../regions/order.ts";
import { expectedAnswerMs } from "../regions/reach.ts";
import type { Region } from "../regions/region.ts";

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
  /** Refused by the open breaker, never sent. */
  refused: number;
  /** Not sent: expected to answer later than what was left of the budget (budget-aware routing). */
  tooFar: number;
  /** Calls that were hedges. */
  hedges: number;
}

export interface RegionBookOptions {
  breaker: BreakerOptions;
  /** Hedge delay before a region has enough samples, in ms. */
  hedgeDefaultMs: number;
  hedgeBudgetRatio: number;
  hedgeBudgetBurst: number;
}

interface Entry {
  region: Region;
  breaker: RegionBreaker;
  latency: LatencyWindow;
  /** Unix ms of the latest answer. */
  lastAnswerAt?: number;
  /** The latest scheduled probe's round trip, while the probe found the region ready. */
  probe?: { rttMs: number; at: number };
  counters: RegionCounters;
}

/**
 * What one isolate knows about each region: its breaker, its recent latencies (the hedge delay and, with the
 * probe's round trip, the answer time to expect) and call counts, plus the shared hedge budget. Isolates do not share this: each learns from its own calls, which
 * is how Envoy's outlier detection works per proxy as well. The policies it applies are pure (regions/).
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
        counters: {
          admitted: 0,
          answered: 0,
          failed: 0,
          timedOut: 0,
          cancelled: 0,
          wrongVersion: 0,
          refused: 0,
          tooFar: 0,
          hedges: 0,
        },
      });
    }
  }

  #entry(name: string): Entry {
    const entry = this.#entries.get(name);
    if (!entry) throw new Error(`unknown region ${name}`);
    return entry;
  }

  /** Ask the region's breaker for a call (admitting the half-open probe changes its state). */
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

  /** Count an outcome and, for answers, keep the latency and when it came. */
  observe(
    name: string,
    outcome: "answered" | "failed" | "timedOut" | "cancelled" | "wrongVersion",
    ms?: number,
    now = Date.now(),
  ): void {
    const entry = this.#entry(name);
    entry.counters[outcome]++;
    if (outcome === "answered" && ms !== undefined) {
      entry.latency.push(ms);
      entry.lastAnswerAt = now;
    }
  }

  countHedge(name: string): void {
    this.#entry(name).counters.hedges++;
  }

  countTooFar(name: string): void {
    this.#entry(name).counters.tooFar++;
  }

  /** Keep each ready region's round trip from a probe report (regions it found not ready keep their last one). */
  seeProbe(report: ProbeReport): void {
    for (const probe of report.regions) {
      const entry = this.#entries.get(probe.name);
      if (!entry || !probe.ready || probe.latencyMs === undefined) continue;
      if (entry.probe && entry.probe.at >= report.at) continue;
      entry.probe = { rttMs: probe.latencyMs, at: report.at };
    }
  }

  /** The answer time to expect from the region at `now` (edge/regions/reach.ts); undefined when unknown. */
  expectedAnswerMs(name: string, now: number): number | undefined {
    const { latency, lastAnswerAt, probe } = this.#entry(name);
    return expectedAnswerMs({ answers: latency.values(), lastAnswerAt, probe }, now);
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

  /** Healthy unless the breaker would refuse a call now or the latest probe found the region not ready. */
  health(now: number, probeReady: Readonly<Record<string, boolean>>): Record<string, RegionHealth> {
    const health: Record<string, RegionHealth> = {};
    for (const [name, entry] of this.#entries) {
      health[name] = breakerAllows(entry.breaker, now) && probeReady[name] !== false ? "healthy" : "unhealthy";
    }
    return health;
  }

  /** This isolate's view, for /status/regions. */
  snapshot(now = Date.now()) {
    return {
      hedgeTokens: Math.round(this.#budget.tokens * 100) / 100,
      regions: [...this.#entries.values()].map((e) => ({
        name: e.region.name,
        url: e.region.url,
        breaker: e.breaker,
        hedgeDelayMs: this.hedgeDelay(e.region.name),
        expectedAnswerMs: this.expectedAnswerMs(e.region.name, now) ?? null,
        latencySamples: e.latency.values().length,
        counters: { ...e.counters },
      })),
    };
  }
}
