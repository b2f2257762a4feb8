import { describe, expect, it } from "vitest";
import { type CapacityInputs, capacityPlan, workerUsPerRequest } from "./capacity-model.ts";

const inputs: CapacityInputs = {
  peakRps: 1_000_000,
  cacheHitRate: 0.5,
  models: [
    { name: "a", trafficShare: 0.5, edgeShare: 0.96 },
    { name: "b", trafficShare: 0.5, edgeShare: 0.98 },
  ],
  regions: [
    { name: "east", trafficShare: 0.75 },
    { name: "west", trafficShare: 0.25 },
  ],
  workerUs: { cache: 100, edge: 200, forward: 300 },
  poolRpsPerProcess: 10_000,
  pod: { processes: 2, headroom: 0.5, minReplicas: 2, maxReplicas: 20 },
  p95Share: 0.05,
  rateLimit: { perClientRps: 100, locations: 300, busiestClientShare: 0 },
};

describe("capacityPlan", () => {
  const plan = capacityPlan(inputs);

  it("splits the peak by what answers: cache, edge model, regions", () => {
    // Uncached 500k; the edge answers 97% of them (the traffic-weighted edge share).
    expect(plan.rates.cache).toBe(500_000);
    expect(plan.rates.edge).toBeCloseTo(485_000);
    expect(plan.rates.regional).toBeCloseTo(15_000);
    expect(plan.forwardedShare).toBeCloseTo(0.015);
  });

  it("sums the Worker's CPU: a forward pays the edge model and the forward", () => {
    const us = 500_000 * 100 + 485_000 * 200 + 15_000 * (200 + 300);
    expect(plan.worker.totalCores).toBeCloseTo(us / 1e6);
    expect(plan.worker.meanUsPerRequest).toBeCloseTo(us / 1e6);
  });

  it("sizes each region with the headroom kept, never under the minimum", () => {
    expect(plan.podRps).toBe(10_000);
    expect(plan.regions).toEqual([
      { name: "east", rps: expect.closeTo(11_250), pods: 2, withinMax: true },
      { name: "west", rps: expect.closeTo(3_750), pods: 2, withinMax: true },
    ]);
  });

  it("names what gives out first: the busiest region's pods at their maximum", () => {
    // east reaches 20 pods x 10k = 200k req/s at 200k / 11.25k = 17.8x today's peak.
    expect(plan.limits[0]!.what).toMatch(/^pods in east/);
    expect(plan.limits[0]!.atPeakRps).toBeCloseTo(1_000_000 * (200_000 / 11_250));
    expect(plan.limits[1]!.what).toMatch(/p95 target/);
    expect(plan.limits[1]!.atPeakRps).toBe(Number.POSITIVE_INFINITY);
  });

  it("counts the rate limit of the busiest client when one client sends a share of the traffic", () => {
    const shared = capacityPlan({
      ...inputs,
      rateLimit: { perClientRps: 100, locations: 300, busiestClientShare: 0.5 },
    });
    expect(shared.limits[0]!.what).toMatch(/rate limit for the busiest client/);
    expect(shared.limits[0]!.atPeakRps).toBe(60_000);
  });

  it("puts the p95 target first when too much is forwarded already", () => {
    const low = capacityPlan({ ...inputs, cacheHitRate: 0, models: [{ name: "a", trafficShare: 1, edgeShare: 0.9 }] });
    expect(low.forwardedShare).toBeCloseTo(0.1);
    expect(low.limits[0]!.what).toMatch(/p95 target/);
    expect(low.limits[0]!.atPeakRps).toBe(0);
  });

  it.each([
    [{ models: [{ name: "a", trafficShare: 0.5, edgeShare: 0.9 }] }, /model traffic shares must be >= 0 and sum to 1/],
    [{ regions: [{ name: "x", trafficShare: 2 }] }, /region traffic shares/],
    [{ cacheHitRate: 1.5 }, /cacheHitRate must be in \[0, 1\]/],
    [{ poolRpsPerProcess: 0 }, /poolRpsPerProcess must be > 0/],
  ])("refuses %o", (change, message) => {
    expect(() => capacityPlan({ ...inputs, ...change } as CapacityInputs)).toThrow(message);
  });
});

describe("workerUsPerRequest", () => {
  it("is the path's time per request minus the hello-world Worker's", () => {
    expect(workerUsPerRequest(2000, 4000)).toBe(250);
    expect(workerUsPerRequest(5000, 4000)).toBe(0);
  });
});
