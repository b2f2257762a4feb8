import { describe, expect, it } from "vitest";
import { LatencyWindow } from "./latency-window.ts";

describe("LatencyWindow", () => {
  it("keeps the last `size` samples", () => {
    const w = new LatencyWindow(3);
    expect(w.values()).toEqual([]);
    for (const ms of [1, 2, 3, 4, 5]) w.push(ms);
    expect([...w.values()].sort()).toEqual([3, 4, 5]);
  });

  it.each([0, -1, 1.5])("refuses size %s", (size) => {
    expect(() => new LatencyWindow(size)).toThrow(/size must be a positive integer/);
  });
});
