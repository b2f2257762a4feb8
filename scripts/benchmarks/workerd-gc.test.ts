import { describe, expect, it } from "vitest";
import { majorGcPauseMs, WorkerdGcLog, withTraceGc } from "./workerd-gc.ts";

// Lines as workerd printed them in bench:many-models (V8 13).
const MAJOR =
  "[9950:0x31be7fcaa000]    69887 ms: Mark-Compact 28.9 (53.6) -> 6.5 (48.9) MB, pooled: 4.8 MB, 214.42 / 0.00 ms (average mu = 0.997, current mu = 0.997) global allocation limit; GC in old space requested";
const MINOR =
  "[9950:0x31be7fbe2000]    77815 ms: Scavenge 14.7 (15.9) -> 14.1 (15.4) MB, pooled: 1.2 MB, 2.51 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ";

describe("workerd's --trace-gc lines", () => {
  it("reads a major collection's pause, and nothing from a scavenge or another line", () => {
    expect(majorGcPauseMs(MAJOR)).toBe(214.42);
    expect(majorGcPauseMs(MAJOR.replace(", pooled: 4.8 MB", ""))).toBe(214.42);
    expect(majorGcPauseMs(MINOR)).toBeUndefined();
    expect(majorGcPauseMs('{"msg":"edge session evicted","model":"digits-0001-edge"}')).toBeUndefined();
  });

  it("keeps the collections with when they arrived, and says which lines were the trace's", () => {
    const log = new WorkerdGcLog();
    expect(log.read(MAJOR, 1_000)).toBe(true);
    expect(log.read(MINOR, 1_500)).toBe(true);
    expect(log.read("edge session evicted", 1_600)).toBe(false);
    expect(log.read(MAJOR.replace("214.42", "61.45"), 9_000)).toBe(true);
    expect(log.collections).toEqual([
      { atMs: 1_000, pauseMs: 214.42 },
      { atMs: 9_000, pauseMs: 61.45 },
    ]);
    expect(log.between(500, 2_000)).toEqual([{ atMs: 1_000, pauseMs: 214.42 }]);
  });

  it("adds --trace-gc to the flags already set, once", () => {
    expect(withTraceGc(undefined)).toBe("--trace-gc");
    expect(withTraceGc("--max-lazy")).toBe("--max-lazy --trace-gc");
    expect(withTraceGc("--trace-gc")).toBe("--trace-gc");
  });
});
