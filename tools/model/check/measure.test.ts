import { afterEach, describe, expect, it, vi } from "vitest";
import { rowLatency } from "./measure.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("rowLatency", () => {
  it("reports nearest-rank quantiles of the timed runs, as the probe does (protocol/quantile.ts)", async () => {
    // The clock the runs are timed with, controlled: the i-th timed run (0-based) takes i + 1 ms, in shuffled order.
    const durations = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1);
    let reads = 0;
    let now = 0;
    vi.spyOn(performance, "now").mockImplementation(() => {
      // Two reads per timed run: its start, then its end.
      const run = Math.floor(reads / 2);
      if (reads % 2 === 1) now += durations[run]!;
      reads++;
      return now;
    });
    const latency = await rowLatency(async () => undefined, [new Float32Array(1)], 100);
    expect(reads).toBe(200);
    // Nearest rank of 1..100 ms: the 50th and the 99th smallest (an index rounded down would say 51 and 100).
    expect(latency).toMatchObject({ p50Ms: 50, p99Ms: 99, samples: 100 });
  });
});
