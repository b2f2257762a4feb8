import { earn, type TokenBucket, take } from "../../protocol/token-bucket.ts";
import type { BreakerOptions, CallOutcome, RegionBreaker } from "../regions/breaker-policy.ts";
import { breakerAdmit, breakerAllows, breakerRecord, CLOSED } from "../regions/breaker-policy.ts";
import { hedgeDelay } from "../regions/hedge-policy.ts";
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
  /** Refused the request's tenant as best-effort under overload (429 `tenant_shed`): answered degraded, `tenant-shed`. */
  shed: number;
  /** Not sent: the region had shed the request's tenant within its Retry-After (forward/tenant-backoff.ts). */
  shedBackoff: number;
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
  /** Places (regions/place.ts) whose evidence is kept; the one longest unused goes first. Default 64. */
  maxPlaces?: number;
}

/** Answer times kept per place and region for the reach estimate. */
const SAMPLES = 20;
/** The key of the evidence of requests whose place is unknown (no colo, no coordinates). */
const UNKNOWN_PLACE = "";

/** What one place's requests taught the isolate of one region, and its warm probes from there. */
interface PlaceEvidence {
  /** The latest answer times (and deadline cut-offs), oldest first: the reach estimate's evidence. */
  samples: AnswerSample[];
  warm: { sentAt?: number; inFlight: boolean };
}

interface Entry {
  region: Region;
  breaker: RegionBreaker;
  latency: LatencyWindow;
  counters: RegionCounters;
}

/** Where a call's evidence goes: its request's place (regions/place.ts), or the unknown place's. */
const placeKey = (location: RequestLocation | undefined) => location?.place ?? UNKNOWN_PLACE;

function expectedForStatus(ms: number | undefined): number | "cut-off" | null {
  if (ms === undefined) return null;
  return Number.isFinite(ms) ? Math.round(ms * 10) / 10 : "cut-off";
}

/**
 * What one isolate knows about each region: its breaker, its recent latencies (the hedge delay), the evidence
 * of the answer time to expect per place the requests came from (its own answers and warm probes from there;
 * regions/reach.ts, regions/place.ts) and call counts, plus the shared hedge budget. Isolates do not share this:
 * each learns from its own calls where it runs, which is how Envoy's outlier detection works per proxy as well.
 * The evidence of at most `maxPlaces` places is kept (each at most SAMPLES answer times per region), so memory
 * is bounded whatever the traffic. The policies it applies are pure (regions/).
 */
export class RegionBook {
  readonly #entries = new Map<string, Entry>();
  /** Evidence by place, then region; in order of last use (a Map keeps insertion order), oldest first. */
  readonly #places = new Map<string, Map<string, PlaceEvidence>>();
  readonly #options: RegionBookOptions;
  /** The hedge budget (regions/hedge-policy.ts): filled by forwarded requests, not by time. */
  #budget: TokenBucket;

  constructor(regions: readonly Region[], options: RegionBookOptions) {
    this.#options = options;
    this.#budget = { tokens: options.hedgeBudgetBurst, at: 0 };
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
          modelUnavailable: 0,
          shed: 0,
          shedBackoff: 0,
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

  /** A place's evidence of a region, made (and the place marked as just used, the longest unused dropped) on demand. */
  #evidence(name: string, place: string): PlaceEvidence {
    this.#entry(name);
    let regions = this.#places.get(place);
    if (regions) this.#places.delete(place);
    else regions = new Map();
    this.#places.set(place, regions);
    const limit = this.#options.maxPlaces ?? 64;
    for (const oldest of this.#places.keys()) {
      if (this.#places.size <= limit) break;
      this.#places.delete(oldest);
    }
    let evidence = regions.get(name);
    if (!evidence) {
      evidence = { samples: [], warm: { inFlight: false } };
      regions.set(name, evidence);
    }
    return evidence;
  }

  /** A place's evidence of a region if there is any, without marking the place used. */
  #peek(name: string, place: string): PlaceEvidence | undefined {
    return this.#places.get(place)?.get(name);
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
   * (the region took at least that long), to the reach evidence of the place the call's request came from
   * (`location`). A call that is not evidence (`evidence: false`: a local stack's warm-up request) is counted only.
   */
  observe(
    name: string,
    outcome: "answered" | "failed" | "timedOut" | "cancelled" | "wrongVersion" | "modelUnavailable" | "shed",
    ms?: number,
    {
      warmProbe = false,
      now = Date.now(),
      location,
      evidence = true,
    }: { warmProbe?: boolean; now?: number; location?: RequestLocation; evidence?: boolean } = {},
  ): void {
    const entry = this.#entry(name);
    entry.counters[outcome]++;
    if (!evidence || ms === undefined || (outcome !== "answered" && outcome !== "timedOut")) return;
    if (outcome === "answered" && !warmProbe) entry.latency.push(ms);
    const sample: AnswerSample = { ms, at: now };
    if (outcome === "timedOut") sample.cutOff = true;
    if (warmProbe) sample.warmProbe = true;
    const { samples } = this.#evidence(name, placeKey(location));
    samples.push(sample);
    if (samples.length > SAMPLES) samples.shift();
  }

  countHedge(name: string): void {
    this.#entry(name).counters.hedges++;
  }

  countTooFar(name: string): void {
    this.#entry(name).counters.tooFar++;
  }

  /** Tenants each region shed, and until when (Unix ms) this isolate keeps their requests from it. */
  readonly #shed = new Map<string, Map<string, number>>();

  /** The region shed `tenant`: keep its requests away until `untilMs`. */
  shedTenant(name: string, tenant: string, untilMs: number): void {
    let tenants = this.#shed.get(name);
    if (!tenants) {
      tenants = new Map();
      this.#shed.set(name, tenants);
    }
    tenants.set(tenant, untilMs);
  }

  /** Whether the region shed `tenant` and its backoff lasts past `now` (counted when it does). */
  keepsShed(name: string, tenant: string, now: number): boolean {
    const until = this.#shed.get(name)?.get(tenant);
    if (until === undefined || now >= until) return false;
    this.#entry(name).counters.shedBackoff++;
    return true;
  }

  /**
   * Claim the region's next warm probe from `location`'s place if one is due (regions/warm-probe-due.ts); the
   * caller sends it (its answer time reaches `observe` through the forwarding layers, as that place's evidence)
   * and says when it ended with `warmProbeEnded`.
   */
  claimWarmProbe(name: string, now: number, location?: RequestLocation): boolean {
    const evidence = this.#evidence(name, placeKey(location));
    const { warmProbeIntervalMs, warmProbeLostAfterMs } = this.#options;
    if (!warmProbeDue(evidence.warm, now, warmProbeIntervalMs, warmProbeLostAfterMs)) return false;
    evidence.warm = { sentAt: now, inFlight: true };
    this.#entry(name).counters.warmProbes++;
    return true;
  }

  warmProbeEnded(name: string, location?: RequestLocation): void {
    const evidence = this.#peek(name, placeKey(location));
    if (evidence) evidence.warm = { ...evidence.warm, inFlight: false };
  }

  /**
   * The answer time to expect from the region for a request from `location` (regions/reach.ts: this isolate's
   * own evidence from that place, else the distance prior); undefined when unknown.
   */
  expectedAnswerMs(name: string, location?: RequestLocation): number | undefined {
    const { region } = this.#entry(name);
    const samples = this.#peek(name, placeKey(location))?.samples ?? [];
    return expectedAnswerMs({ samples, priorMs: priorRoundTripMs(location, region) }, this.#options.reachQuantile);
  }

  /** How long to wait for this region before hedging: its observed p95, or the configured default. */
  hedgeDelay(name: string): number {
    return hedgeDelay(this.#entry(name).latency.values(), { defaultMs: this.#options.hedgeDefaultMs });
  }

  /** Every forwarded request earns a fraction of a hedge. */
  earnHedge(): void {
    this.#budget = earn(this.#budget, this.#options.hedgeBudgetRatio, this.#options.hedgeBudgetBurst);
  }

  /** Spend a hedge if the budget has one. */
  spendHedge(): boolean {
    const { ok, bucket: budget } = take(this.#budget);
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

  /**
   * This isolate's view, for /status/regions: each region's breaker, hedge delay and counts; the answer time it
   * expects for a request from `location` (the status request's own: its evidence from there, else the distance
   * prior; "cut-off" while calls cut off by the deadline make up the estimate, regions/reach.ts) and the last
   * warm probe from there; and its evidence from every place it keeps.
   */
  snapshot(location?: RequestLocation) {
    const here = placeKey(location);
    return {
      hedgeTokens: Math.round(this.#budget.tokens * 100) / 100,
      place: location?.place ?? null,
      regions: [...this.#entries.values()].map((e) => {
        const name = e.region.name;
        const places = [...this.#places].flatMap(([place, regions]) => {
          const evidence = regions.get(name);
          if (!evidence || evidence.samples.length === 0) return [];
          return [
            {
              place: place === UNKNOWN_PLACE ? null : place,
              expectedAnswerMs: expectedForStatus(expectedAnswerMs(evidence, this.#options.reachQuantile)),
              samples: evidence.samples.length,
              lastWarmProbe: evidence.samples.findLast((s) => s.warmProbe) ?? null,
            },
          ];
        });
        return {
          name,
          url: e.region.url,
          breaker: e.breaker,
          hedgeDelayMs: this.hedgeDelay(name),
          expectedAnswerMs: expectedForStatus(this.expectedAnswerMs(name, location)),
          lastWarmProbe: this.#peek(name, here)?.samples.findLast((s) => s.warmProbe) ?? null,
          latencySamples: e.latency.values().length,
          counters: { ...e.counters },
          places,
        };
      }),
    };
  }
}
