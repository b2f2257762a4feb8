import { describe, expect, it } from "vitest";
import { parseProcStat, stealShare } from "./machine-steal.ts";

describe("parseProcStat", () => {
  it("sums the aggregate line's first eight fields and takes steal, the eighth", () => {
    const stat = "cpu  100 0 50 800 10 0 20 20 0 0\ncpu0 50 0 25 400 5 0 10 10 0 0\nintr 1 2\n";
    expect(parseProcStat(stat)).toEqual({ total: 1000, steal: 20 });
  });

  it("is undefined for text without a usable cpu line", () => {
    expect(parseProcStat("intr 1 2\n")).toBeUndefined();
    expect(parseProcStat("cpu  1 2 x\n")).toBeUndefined();
  });
});

describe("stealShare", () => {
  it("is the steal ticks' share of all ticks between two readings", () => {
    expect(stealShare({ total: 1000, steal: 20 }, { total: 2000, steal: 220 })).toBe(0.2);
    expect(stealShare(undefined, { total: 2000, steal: 220 })).toBeUndefined();
    expect(stealShare({ total: 2000, steal: 20 }, { total: 2000, steal: 20 })).toBeUndefined();
  });
});
