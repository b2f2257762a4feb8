import { describe, expect, it } from "vitest";
import { type RunClocks, rowLatency } from "./measure.ts";

describe("rowLatency", () => {
  it("reports nearest-rank quantiles of the timed runs, as the probe does (protocol/quantile.ts), and CPU per row", async () => {
    // The clocks the runs are timed with, controlled: the i-th timed run (0-based) takes a shuffled 1..100 ms,
    // and the thread's CPU time moves by 250 µs per run.
    const durations = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1);
    let reads = 0;
    let now = 0;
    let cpuUs = 7;
    const clocks: RunClocks = {
      now: () => {
        // Two reads per timed run: its start, then its end.
        const run = Math.floor(reads / 2);
        if (reads % 2 === 1) now += durations[run]!;
        reads++;
        return now;
      },
      threadCpuUs: () => cpuUs,
    };
    const run = async () => {
      cpuUs += 250;
    };
    const latency = await rowLatency(run, [new Float32Array(1)], 100, clocks);
    expect(reads).toBe(200);
    // Nearest rank of 1..100 ms: the 50th and the 99th smallest (an index rounded down would say 51 and 100).
    // The 100 warm-up runs move the CPU clock too, but are not counted.
    expect(latency).toEqual({ p50Ms: 50, p99Ms: 99, cpuUsPerRow: 250, samples: 100 });
  });
});
