import { describe, expect, it } from "vitest";
import { LoadTally } from "./load-tally.ts";

describe("LoadTally", () => {
  it("counts statuses, times the 200s and the send lag of every request", () => {
    const tally = new LoadTally();
    for (let i = 1; i <= 100; i++) tally.record({ status: 200, latencyMs: i, sendLagMs: i / 100 });
    tally.record({ status: 429, latencyMs: 0.5, sendLagMs: 0 });
    tally.record({ status: 0, latencyMs: 5000, sendLagMs: 3 });
    const s = tally.summary(2);
    expect(s).toMatchObject({ requests: 102, ok: 100, statuses: { 0: 1, 200: 100, 429: 1 }, durationS: 2 });
    expect(s.reqPerSec).toBe(51);
    expect(s.latency).toMatchObject({ count: 100, p50Ms: 50, p95Ms: 95, p99Ms: 99, maxMs: 100 });
    expect(s.sendLagMs).toEqual({ p50: 0.5, p99: 1, max: 3 });
  });

  it("sums up an empty run as zeros", () => {
    const s = new LoadTally().summary(0);
    expect(s).toMatchObject({ requests: 0, ok: 0, statuses: {}, reqPerSec: 0, sendLagMs: { p50: 0, p99: 0, max: 0 } });
    expect(s.latency.count).toBe(0);
  });
});
