import { describe, expect, it } from "vitest";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { median, popularityOrder, runFigures } from "./many-models-traffic.ts";

describe("popularityOrder", () => {
  it("is a shuffle of the names, the same for the same seed", () => {
    const names = Array.from({ length: 50 }, (_, i) => `m${i}`);
    const a = popularityOrder(names, seededRandom(7));
    expect([...a].sort()).toEqual([...names].sort());
    expect(popularityOrder(names, seededRandom(7))).toEqual(a);
    expect(popularityOrder(names, seededRandom(8))).not.toEqual(a);
  });
});

describe("runFigures", () => {
  it("the hot models' latencies apart, the edge share of the answers, failures counted", () => {
    const answers = [
      ...Array.from({ length: 98 }, (_, i) => ({ rank: 0, latencyMs: 1 + i / 100, status: 200, servedBy: "edge" })),
      { rank: 1, latencyMs: 9, status: 200, servedBy: "regional:us" },
      { rank: 500, latencyMs: 40, status: 200, servedBy: "degraded", degraded: "deadline" },
      { rank: 700, latencyMs: 5000, status: 0, servedBy: "" },
    ];
    const figures = runFigures(answers, 10);
    expect(figures).toMatchObject({ requests: 101, failed: 1, forwarded: 1, degraded: 1, models: 4 });
    expect(figures.degradedBy).toEqual({ deadline: 1 });
    expect(figures.failedBy).toEqual({ "0": 1 });
    expect(figures.edgeShare).toBe(0.98);
    expect(figures.hot).toEqual({
      requests: 99,
      p50Ms: 1.49,
      p99Ms: 9,
      tail: [{ ms: 9, servedBy: "regional:us", atS: NaN }],
    });
    expect(figures.all.p99Ms).toBe(9);
  });

  it("names the hot requests at or above the p99 in the order they were answered", () => {
    const answers = Array.from({ length: 200 }, (_, i) => ({
      rank: i % 3,
      latencyMs: i === 50 || i === 120 ? 80 : i === 10 ? 60 : 2,
      status: 200,
      servedBy: i === 10 ? "regional:us" : "edge",
      atS: i / 10,
    }));
    expect(runFigures(answers, 10).hot.tail).toEqual([
      { ms: 60, servedBy: "regional:us", atS: 1 },
      { ms: 80, servedBy: "edge", atS: 5 },
      { ms: 80, servedBy: "edge", atS: 12 },
    ]);
  });
});

describe("median", () => {
  it("of odd and even counts", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });
});
