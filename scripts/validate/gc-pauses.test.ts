import { constants } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { gcPauses, requestsInPauses } from "./gc-pauses.ts";

describe("gcPauses", () => {
  it("counts, sums and finds the longest pause; mark-compacts counted apart", () => {
    expect(
      gcPauses([
        { durationMs: 0.5, kind: constants.NODE_PERFORMANCE_GC_MINOR },
        { durationMs: 3.25, kind: constants.NODE_PERFORMANCE_GC_MAJOR },
        { durationMs: 0.75, kind: constants.NODE_PERFORMANCE_GC_INCREMENTAL },
      ]),
    ).toEqual({ count: 3, major: 1, totalMs: 4.5, maxMs: 3.25 });
  });

  it("is all zeros without pauses", () => {
    expect(gcPauses([])).toEqual({ count: 0, major: 0, totalMs: 0, maxMs: 0 });
  });
});

describe("requestsInPauses", () => {
  const span = (startMs: number, endMs: number) => ({ startMs, endMs });

  it("counts the requests in flight during any pause, each once", () => {
    const pauses = [span(10, 12), span(30, 31)];
    const requests = [span(0, 9), span(5, 11), span(11.5, 40), span(12, 30), span(29, 31)];
    // (5, 11) overlaps the first, (11.5, 40) both, (29, 31) the second; (0, 9) and (12, 30) touch none.
    expect(requestsInPauses(requests, pauses)).toBe(3);
  });

  it("is 0 without pauses or without requests", () => {
    expect(requestsInPauses([span(0, 5)], [])).toBe(0);
    expect(requestsInPauses([], [span(0, 5)])).toBe(0);
  });
});
