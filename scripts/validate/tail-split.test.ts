import { describe, expect, it } from "vitest";
import { regionCallMs, tailSplit } from "./tail-split.ts";

describe("regionCallMs", () => {
  it.each([
    ['cache;dur=0.0;desc="miss",edge;desc="digits-edge",regional;dur=8.0;desc="eu"', 8],
    ['cache;desc="bypass", regional;dur=12.5;desc="ap",hedge', 12.5],
    ['cache;dur=0.0;desc="hit-memory"', undefined],
    ['regional;desc="eu"', undefined],
    ["regional;dur=abc", undefined],
    [undefined, undefined],
  ])("%s -> %s", (header, ms) => {
    expect(regionCallMs(header)).toBe(ms);
  });
});

describe("tailSplit", () => {
  it("counts the requests over the line by path and splits the forwards' latency", () => {
    const split = tailSplit(
      [
        { path: "cache", latencyMs: 2 },
        { path: "edge", latencyMs: 11 },
        { path: "regional", latencyMs: 12, regionMs: 8 },
        { path: "regional", latencyMs: 9, regionMs: 7 },
        { path: "degraded", latencyMs: 14 },
      ],
      10,
    );
    expect(split.over).toBe(3);
    expect(split.overByPath).toEqual({ edge: 1, regional: 1, degraded: 1 });
    expect(split.forwards?.regionCall.count).toBe(2);
    expect(split.forwards?.regionCall.maxMs).toBe(8);
    expect(split.forwards?.rest.p50Ms).toBe(2);
    expect(split.forwards?.rest.maxMs).toBe(4);
  });

  it("has no forward split without regional answers timed by the edge", () => {
    const split = tailSplit([{ path: "regional", latencyMs: 12 }], 10);
    expect(split.forwards).toBeNull();
    expect(split.overByPath).toEqual({ regional: 1 });
  });
});
