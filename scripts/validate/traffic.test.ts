import { describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { inputOfRank, zipfSampler, zipfTraffic } from "./traffic.ts";

const rows: HeldoutRow[] = Array.from({ length: 4 }, (_, i) => ({
  input: [i, i + 1, i + 2],
  label: i,
  expected: {},
}));

describe("zipfSampler", () => {
  it("draws rank k about (1/(k+1)^s) / H as often", () => {
    const draw = zipfSampler(100, 1, seededRandom(3));
    const counts = new Array<number>(100).fill(0);
    for (let i = 0; i < 200_000; i++) counts[draw()]!++;
    const h = Array.from({ length: 100 }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b);
    expect(counts[0]! / 200_000).toBeCloseTo(1 / h, 2);
    expect(counts[1]! / 200_000).toBeCloseTo(0.5 / h, 2);
    expect(counts[9]! / 200_000).toBeCloseTo(0.1 / h, 2);
  });

  it("is uniform with s = 0", () => {
    const draw = zipfSampler(4, 0, seededRandom(5));
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[draw()]!++;
    for (const c of counts) expect(c / 40_000).toBeCloseTo(0.25, 1);
  });

  it.each([
    [0, 1, "distinct must be a positive integer, got 0"],
    [10, -1, "zipfS must be >= 0, got -1"],
  ])("refuses n=%s s=%s", (n, s, message) => {
    expect(() => zipfSampler(n, s, Math.random)).toThrow(message);
  });
});

describe("inputOfRank", () => {
  const order = [2, 0, 3, 1];
  it("sends the rows unchanged on the first pass, in the shuffled order", () => {
    expect(inputOfRank(rows, order, 0, 0.001)).toEqual({ row: 2, input: [2, 3, 4] });
    expect(inputOfRank(rows, order, 3, 0.001)).toEqual({ row: 1, input: [1, 2, 3] });
  });

  it("offsets one value of later variants, each a different input", () => {
    const seen = new Set<string>();
    for (let rank = 0; rank < 4 * 10; rank++) {
      const { row, input } = inputOfRank(rows, order, rank, 0.001);
      expect(row).toBe(order[rank % 4]);
      for (const [i, v] of input.entries()) expect(Math.abs(v - rows[row]!.input[i]!)).toBeLessThanOrEqual(0.004);
      seen.add(JSON.stringify(input));
    }
    expect(seen.size).toBe(40);
  });
});

describe("zipfTraffic", () => {
  it("repeats popular inputs and is reproducible from its seed", () => {
    const a = zipfTraffic(rows, seededRandom(9), { distinct: 1000 });
    const b = zipfTraffic(rows, seededRandom(9), { distinct: 1000 });
    const fromA = Array.from({ length: 500 }, a);
    expect(Array.from({ length: 500 }, b)).toEqual(fromA);
    const distinctInputs = new Set(fromA.map((r) => JSON.stringify(r.input))).size;
    expect(distinctInputs).toBeLessThan(400);
    expect(distinctInputs).toBeGreaterThan(50);
  });
});
