import { describe, expect, it } from "vitest";
import { latencyStats, type ProbeResult, pathOf, quantileOrZero, summarize } from "./summary.ts";

const run = { url: "http://x", startedAt: "t", durationS: 1, rateRps: 100 };
const ok = (path: ProbeResult["path"], latencyMs: number, extra: Partial<ProbeResult> = {}): ProbeResult => ({
  path,
  latencyMs,
  status: 200,
  ...extra,
});

describe("probe summary", () => {
  it("maps servedBy to a path", () => {
    expect(pathOf("cache")).toBe("cache");
    expect(pathOf("edge")).toBe("edge");
    expect(pathOf("degraded")).toBe("degraded");
    expect(pathOf("regional:eu")).toBe("regional");
    expect(pathOf("elsewhere")).toBe("error");
    expect(pathOf(undefined)).toBe("error");
  });

  it("takes nearest-rank percentiles", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantileOrZero(sorted, 0.5)).toBe(50);
    expect(quantileOrZero(sorted, 0.95)).toBe(95);
    expect(quantileOrZero(sorted, 0.99)).toBe(99);
    expect(quantileOrZero([], 0.95)).toBe(0);
    expect(latencyStats([3, 1, 2])).toEqual({ count: 3, p50Ms: 2, p95Ms: 3, p99Ms: 3, maxMs: 3, meanMs: 2 });
  });

  it("counts per path and region, errors and mismatches, and checks the target", () => {
    const results = [
      ...Array.from({ length: 90 }, () => ok("cache", 1)),
      ...Array.from({ length: 6 }, () => ok("edge", 4, { correct: true })),
      ok("edge", 5, { correct: false }),
      ok("regional", 30, { region: "eu" }),
      ok("regional", 40, { region: "us" }),
      { path: "error", latencyMs: 2, status: 503, error: "HTTP 503" } as ProbeResult,
    ];
    const s = summarize(results, { ...run, sent: 100 });
    expect(s.sent).toBe(100);
    expect(s.completed).toBe(99);
    expect(s.errors).toBe(1);
    expect(s.errorRate).toBe(0.01);
    expect(s.mismatches).toBe(1);
    expect(s.paths.cache!.count).toBe(90);
    expect(s.paths.edge!.p50Ms).toBe(4);
    expect(s.paths.regional!.count).toBe(2);
    expect(s.regions).toEqual({ eu: 1, us: 1 });
    expect(s.overall.count).toBe(100);
    expect(s.target).toEqual({ p95Ms: 10, measuredP95Ms: 4, holds: true });
    expect(s.errorSamples).toEqual(["HTTP 503"]);
  });

  it("counts failures as never answered for the target", () => {
    const results = [
      ...Array.from({ length: 94 }, () => ok("edge", 1)),
      ...Array.from({ length: 6 }, () => ({ path: "error", latencyMs: 1, status: 0, error: "refused" }) as ProbeResult),
    ];
    const s = summarize(results, { ...run, sent: 100 });
    expect(s.overall.p95Ms).toBe(1);
    expect(s.target).toEqual({ p95Ms: 10, measuredP95Ms: null, holds: false });
  });

  it("misses the target when the p95 is over it", () => {
    const results = [
      ...Array.from({ length: 90 }, () => ok("edge", 2)),
      ...Array.from({ length: 10 }, () => ok("regional", 25)),
    ];
    expect(summarize(results, { ...run, sent: 100 }).target).toEqual({ p95Ms: 10, measuredP95Ms: 25, holds: false });
    expect(summarize(results, { ...run, sent: 100, targetP95Ms: 30 }).target.holds).toBe(true);
  });

  it("reports the floor run's latency apart, or null without one", () => {
    const results = [ok("cache", 3), ok("cache", 4)];
    expect(summarize(results, { ...run, sent: 2 }).floor).toBeNull();
    const s = summarize(results, { ...run, sent: 2, floorMs: [0.4, 0.6, 0.5] });
    expect(s.floor).toEqual({ count: 3, p50Ms: 0.5, p95Ms: 0.6, p99Ms: 0.6, maxMs: 0.6, meanMs: 0.5 });
    expect(s.overall.count).toBe(2);
  });
});
