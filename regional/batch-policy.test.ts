import { describe, expect, it } from "vitest";
import { type BatchLimits, nextBatch, type QueuedCall } from "./batch-policy.ts";

const call = (rows: number, enqueuedUs = 0, deadlineUs = Number.POSITIVE_INFINITY): QueuedCall => ({
  rows,
  enqueuedUs,
  deadlineUs,
});
const limits = (maxBatch: number, maxQueueDelayUs = 0): BatchLimits => ({ maxBatch, maxQueueDelayUs });

describe("nextBatch", () => {
  it("an empty queue runs nothing", () => {
    expect(nextBatch([], limits(8), 0, "idle")).toEqual({ expire: [], run: [] });
  });

  it("an idle model runs a lone call at once, even with a queue delay configured", () => {
    expect(nextBatch([call(1)], limits(8, 5_000), 10, "idle")).toEqual({ expire: [], run: [0] });
  });

  it("takes calls oldest first up to maxBatch rows, never splitting one", () => {
    const queue = [call(3), call(4), call(2), call(1)];
    // 3 + 4 = 7; adding 2 would make 9 > 8, so the third call waits for the next batch.
    expect(nextBatch(queue, limits(8), 0, "idle")).toEqual({ expire: [], run: [0, 1] });
  });

  it("a call larger than maxBatch runs alone", () => {
    expect(nextBatch([call(20), call(1)], limits(8), 0, "idle")).toEqual({ expire: [], run: [0] });
  });

  it("expires calls whose deadline has passed and never runs them", () => {
    const queue = [call(1, 0, 50), call(2, 0, 200), call(1, 0, 100)];
    expect(nextBatch(queue, limits(8), 100, "idle")).toEqual({ expire: [0, 2], run: [1] });
  });

  it("a deadline exactly now counts as passed", () => {
    expect(nextBatch([call(1, 0, 100)], limits(8), 100, "idle")).toEqual({ expire: [0], run: [] });
  });

  it("a busy model with no queue delay runs what is waiting without waiting for more", () => {
    expect(nextBatch([call(1), call(1)], limits(8, 0), 0, "busy")).toEqual({ expire: [], run: [0, 1] });
  });

  it("a busy model waits for a partial batch until the oldest call has waited maxQueueDelayUs", () => {
    const queue = [call(1, 1_000), call(2, 1_200)];
    expect(nextBatch(queue, limits(8, 500), 1_300, "busy")).toEqual({ expire: [], run: [], wakeAtUs: 1_500 });
    expect(nextBatch(queue, limits(8, 500), 1_500, "busy")).toEqual({ expire: [], run: [0, 1] });
  });

  it("a busy model runs a full batch at once", () => {
    expect(nextBatch([call(4), call(4)], limits(8, 500), 0, "busy")).toEqual({ expire: [], run: [0, 1] });
  });

  it("a busy model runs at once when more is waiting than one batch holds", () => {
    expect(nextBatch([call(5), call(5)], limits(8, 500), 0, "busy")).toEqual({ expire: [], run: [0] });
  });

  it("does not wait for company past a caller's deadline", () => {
    const queue = [call(1, 0), call(1, 0, 300)];
    expect(nextBatch(queue, limits(8, 500), 100, "busy")).toEqual({ expire: [], run: [0, 1] });
  });

  it("reports expired calls while a partial batch waits", () => {
    const queue = [call(1, 0, 50), call(1, 60)];
    expect(nextBatch(queue, limits(8, 500), 100, "busy")).toEqual({ expire: [0], run: [], wakeAtUs: 560 });
  });
});

describe("nextBatch with tenants", () => {
  const tagged = (rows: number, startTag: number, reserved = false): QueuedCall => ({
    ...call(rows),
    startTag,
    reserved,
  });

  it("takes calls within a reservation first, then best-effort calls by start tag", () => {
    // A flood's calls (tags 0, 8, 16) queued before a reserved call and another tenant's call (tag 0).
    const queue = [tagged(8, 0), tagged(8, 8), tagged(8, 16), tagged(1, 0, true), tagged(4, 0)];
    expect(nextBatch(queue, limits(16), 0, "busy").run).toEqual([3, 0, 4]);
  });

  it("keeps arrival order when everything waiting fits in one batch", () => {
    const queue = [tagged(2, 9), tagged(1, 0, true), tagged(2, 0)];
    expect(nextBatch(queue, limits(8), 0, "busy").run).toEqual([0, 1, 2]);
  });

  it("keeps arrival order among equal tags and without tags", () => {
    expect(nextBatch([call(5), call(5), call(5)], limits(8), 0, "busy").run).toEqual([0]);
    expect(nextBatch([tagged(5, 1), tagged(5, 1)], limits(8), 0, "busy").run).toEqual([0]);
  });
});
