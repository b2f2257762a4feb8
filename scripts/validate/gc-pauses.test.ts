import { constants } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { gcPauses } from "./gc-pauses.ts";

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
