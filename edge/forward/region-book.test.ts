import { describe, expect, it } from "vitest";
import type { Region, RequestLocation } from "../regions/region.ts";
import { RegionBook, type RegionBookOptions } from "./region-book.ts";

const region = (name: string, latitude: number, longitude: number): Region => ({
  name,
  url: `http://${name}`,
  latitude,
  longitude,
});
const REGIONS = [region("us", 39.04, -77.49), region("eu", 50.11, 8.68), region("ap", 35.68, 139.69)];
const OPTIONS: RegionBookOptions = {
  breaker: { failures: 5, cooldownMs: 30_000, maxCooldownMs: 300_000 },
  hedgeDefaultMs: 5,
  hedgeBudgetRatio: 0.1,
  hedgeBudgetBurst: 5,
  warmProbeIntervalMs: 1000,
  warmProbeLostAfterMs: 5000,
};
/** Pretended locations, as the local stack reads them (regions/request-location.ts). */
const TOKYO: RequestLocation = { latitude: 35.68, longitude: 139.69, place: "35.7,139.7" };
const FRANKFURT: RequestLocation = { latitude: 50.11, longitude: 8.68, place: "50.1,8.7" };

describe("RegionBook: the reach evidence per place", () => {
  it("a Tokyo request's slow call to eu is no estimate of eu for a request from Frankfurt", () => {
    const book = new RegionBook(REGIONS, OPTIONS);
    book.observe("eu", "timedOut", 10, { location: TOKYO });
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(Number.POSITIVE_INFINITY);
    // Frankfurt has no evidence of its own: the distance prior (eu is next door).
    expect(book.expectedAnswerMs("eu", FRANKFURT)).toBe(2);
    book.observe("eu", "answered", 3, { location: FRANKFURT });
    expect(book.expectedAnswerMs("eu", FRANKFURT)).toBe(3);
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(Number.POSITIVE_INFINITY);
  });

  it("a warm-up call is counted but is no evidence: neither the estimate nor the hedge delay moves", () => {
    const book = new RegionBook(REGIONS, OPTIONS);
    for (let i = 0; i < 30; i++) book.observe("ap", "timedOut", 10, { location: TOKYO, evidence: false });
    for (let i = 0; i < 30; i++) book.observe("ap", "answered", 40, { location: TOKYO, evidence: false });
    expect(book.expectedAnswerMs("ap", TOKYO)).toBe(2);
    const ap = book.snapshot(TOKYO).regions.find((r) => r.name === "ap")!;
    expect(ap.counters).toMatchObject({ timedOut: 30, answered: 30 });
    expect(ap.latencySamples).toBe(0);
    expect(ap.places).toEqual([]);
  });

  it("claims warm probes per place and region: one place's probe in flight does not hold another's back", () => {
    const book = new RegionBook(REGIONS, OPTIONS);
    expect(book.claimWarmProbe("eu", 1000, TOKYO)).toBe(true);
    expect(book.claimWarmProbe("eu", 1001, TOKYO)).toBe(false);
    expect(book.claimWarmProbe("eu", 1001, FRANKFURT)).toBe(true);
    book.warmProbeEnded("eu", TOKYO);
    expect(book.claimWarmProbe("eu", 1500, TOKYO)).toBe(false); // within the interval
    expect(book.claimWarmProbe("eu", 2000, TOKYO)).toBe(true);
    // The probe's time is the evidence of the place it was sent for.
    book.observe("eu", "answered", 7, { location: TOKYO, warmProbe: true, now: 2010 });
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(7);
    expect(book.expectedAnswerMs("eu", FRANKFURT)).toBe(2);
  });

  it("keeps the evidence of at most maxPlaces places, dropping the one longest unused", () => {
    const book = new RegionBook(REGIONS, { ...OPTIONS, maxPlaces: 2 });
    const colo = (place: string): RequestLocation => ({ colo: place, place });
    book.observe("us", "answered", 11, { location: colo("IAD") });
    book.observe("us", "answered", 12, { location: colo("FRA") });
    book.observe("us", "answered", 13, { location: colo("IAD") }); // IAD used again: FRA is the oldest now
    book.observe("us", "answered", 14, { location: colo("NRT") });
    const places = book
      .snapshot()
      .regions.find((r) => r.name === "us")!
      .places.map((p) => p.place);
    expect(places.sort()).toEqual(["IAD", "NRT"]);
    expect(book.expectedAnswerMs("us", colo("FRA"))).toBeUndefined(); // no prior without coordinates
    expect(book.expectedAnswerMs("us", colo("IAD"))).toBe(11);
  });

  it("snapshot: the estimate for the asking place (else its prior), and every place's evidence", () => {
    const book = new RegionBook(REGIONS, OPTIONS);
    book.observe("ap", "answered", 4, { location: TOKYO });
    const fromTokyo = book.snapshot(TOKYO);
    expect(fromTokyo.place).toBe("35.7,139.7");
    const ap = fromTokyo.regions.find((r) => r.name === "ap")!;
    expect(ap.expectedAnswerMs).toBe(4);
    expect(ap.places).toEqual([{ place: "35.7,139.7", expectedAnswerMs: 4, samples: 1, lastWarmProbe: null }]);
    // From Frankfurt, ap's distance prior: 2 x (1 ms + 9,350 km / 150 km per ms).
    expect(book.snapshot(FRANKFURT).regions.find((r) => r.name === "ap")!.expectedAnswerMs).toBeGreaterThan(120);
  });
});
