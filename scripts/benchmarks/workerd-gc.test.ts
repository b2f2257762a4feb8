import { describe, expect, it } from "vitest";
import { heldGrowthBytes, parseGcLine, WorkerdGcLog, withTraceGc } from "./workerd-gc.ts";

const WORKER = "0x730b7fcaa000";
const ENTRY = "0x730b7f7ea000";

/** A `--trace-gc-nvp` line as workerd printed it in bench:many-models (V8 13), with the fields read kept. */
function line(isolate: string, gc: string, pause: number, before: number, after: number, isolateMs = 69_833) {
  const fields = {
    pause,
    mutator: 195.8,
    gc,
    reduce_memory: false,
    reason: gc === "s" ? "allocation failure" : "global allocation limit",
    start_old_gen_consumed_size: 1_847_232,
    end_old_gen_consumed_size: 2_470_020,
    start_global_consumed_size: before,
    end_global_consumed_size: after,
    old_gen_allocation_limit: 33_554_432,
    global_allocation_limit: 67_108_864,
  };
  return `[9707:${isolate}:0]    ${isolateMs} ms: GC: ${JSON.stringify(fields)}`;
}

describe("workerd's --trace-gc-nvp lines", () => {
  it("reads a collection: its isolate, whether it was major, its pause and the global heap around it", () => {
    expect(parseGcLine(line(WORKER, "mc", 192.48, 67_483_723, 30_885_367))).toEqual({
      isolate: WORKER,
      isolateMs: 69_833,
      major: true,
      pauseMs: 192.48,
      heldBeforeBytes: 67_483_723,
      heldAfterBytes: 30_885_367,
    });
    expect(parseGcLine(line(ENTRY, "s", 1.1, 26_483_057, 27_105_845))).toMatchObject({ isolate: ENTRY, major: false });
    expect(parseGcLine(line(WORKER, "mmc", 40, 2, 1))?.major).toBe(true);
  });

  it("reads nothing from another line, or from a trace line without the sizes", () => {
    expect(parseGcLine('{"msg":"edge session evicted","model":"digits-0001-edge"}')).toBeUndefined();
    expect(parseGcLine("[9707:0x730b7fcaa000:0]      198 ms: Memory pool: Removed pages: 0")).toBeUndefined();
    expect(parseGcLine(`[9707:${WORKER}:0] 1 ms: GC: {"pause":1,"gc":"s"}`)).toBeUndefined();
    expect(parseGcLine(`[9707:${WORKER}:0] 1 ms: GC: {"pause":1,`)).toBeUndefined();
  });

  it("counts what each isolate left between its collections and what scavenges promoted, never what a major one freed", () => {
    const gcs = [
      line(WORKER, "s", 1, 10_000, 10_400), // promoted 400 (no earlier collection of this isolate in the window)
      line(ENTRY, "s", 1, 5_000, 5_100), // promoted 100
      line(WORKER, "s", 1, 11_000, 11_300), // 600 left since, 300 promoted
      line(WORKER, "mc", 90, 12_000, 4_000), // 700 left since; what it freed is not counted
      line(WORKER, "s", 1, 4_500, 4_500), // 500 left since
      line(ENTRY, "s", 1, 5_600, 5_700), // 500 left since, 100 promoted
    ].map((l) => parseGcLine(l)!);
    expect(heldGrowthBytes(gcs)).toBe(400 + 100 + 600 + 300 + 700 + 500 + 500 + 100);
    // With each isolate's last collection before the window, growth counts from its end.
    const before = new Map([[WORKER, parseGcLine(line(WORKER, "s", 1, 9_000, 9_500))!]]);
    expect(heldGrowthBytes(gcs, before)).toBe(400 + 100 + 600 + 300 + 700 + 500 + 500 + 100 + 500);
  });

  it("puts each collection on Node's clock by its isolate's least delayed line, and gives a window's major ones and growth", () => {
    const log = new WorkerdGcLog();
    // The isolate's clock is 400 ms behind Node's: lines arriving later than that were held up in the log pipe.
    expect(log.read(line(WORKER, "s", 1, 1_000, 1_200, 100), 500)).toBe(true);
    expect(log.read(line(WORKER, "s", 1, 2_000, 2_100, 1_100), 1_500)).toBe(true);
    expect(log.read(line(WORKER, "mc", 120.5, 3_000, 900, 2_100), 4_000)).toBe(true);
    expect(log.read("[9707:0x730b7fcaa000:0]  198 ms: Memory pool: Removed pages: 0", 4_100)).toBe(true);
    expect(log.read("edge session evicted", 4_200)).toBe(false);
    expect(log.read(line(WORKER, "s", 1, 1_400, 1_400, 8_600), 9_000)).toBe(true);
    expect(log.between(1_000, 3_000)).toEqual({
      // Its pause ended at 2,500 on Node's clock, although its line arrived at 4,000.
      majors: [{ atMs: 1_500, pauseMs: 120.5, heldBeforeBytes: 3_000, heldAfterBytes: 900 }],
      // From the collection before the window (ended at 1,200 bytes): 800 left, 100 promoted, then 900 left.
      heldGrowthBytes: 800 + 100 + 900,
    });
    expect(log.between(3_000, 10_000)).toEqual({ majors: [], heldGrowthBytes: 500 });
  });

  it("adds --trace-gc-nvp to the flags already set, once", () => {
    expect(withTraceGc(undefined)).toBe("--trace-gc-nvp");
    expect(withTraceGc("--max-lazy")).toBe("--max-lazy --trace-gc-nvp");
    expect(withTraceGc("--trace-gc-nvp")).toBe("--trace-gc-nvp");
  });
});
