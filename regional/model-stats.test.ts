import { describe, expect, it } from "vitest";
import { sumStatistics, VersionStatistics } from "./model-stats.ts";

describe("VersionStatistics", () => {
  it("starts at zero, as Triton lists a loaded model that has not run", () => {
    expect(new VersionStatistics("digits", "1").snapshot()).toEqual({
      name: "digits",
      version: "1",
      last_inference: 0,
      inference_count: 0,
      execution_count: 0,
      inference_stats: {
        success: { count: 0, ns: 0 },
        fail: { count: 0, ns: 0 },
        queue: { count: 0, ns: 0 },
        compute_input: { count: 0, ns: 0 },
        compute_infer: { count: 0, ns: 0 },
        compute_output: { count: 0, ns: 0 },
      },
      batch_stats: [],
    });
  });

  it("counts requests, rows, executions and durations in nanoseconds; a batch charges each of its requests", () => {
    const s = new VersionStatistics("digits", "1");
    // Two requests of 3 and 1 rows batched into one run of 4 rows (2 ms), then one request of 1 row alone (1 ms).
    s.queued(0.0005);
    s.queued(0.0001);
    s.executed(4, 0.002, 2);
    s.request("success", 0.003, 1_000);
    s.request("success", 0.0025, 1_001);
    s.queued(0);
    s.executed(1, 0.001, 1);
    s.request("success", 0.0012, 1_002);
    s.request("expired", 0.05, 1_003);
    const snap = s.snapshot();
    expect(snap).toMatchObject({ last_inference: 1_003, inference_count: 5, execution_count: 2 });
    expect(snap.inference_stats).toEqual({
      success: { count: 3, ns: 6_700_000 },
      fail: { count: 1, ns: 50_000_000 },
      queue: { count: 3, ns: 600_000 },
      compute_input: { count: 3, ns: 0 },
      compute_infer: { count: 3, ns: 5_000_000 },
      compute_output: { count: 3, ns: 0 },
    });
    expect(snap.batch_stats).toEqual([
      {
        batch_size: 1,
        compute_input: { count: 1, ns: 0 },
        compute_infer: { count: 1, ns: 1_000_000 },
        compute_output: { count: 1, ns: 0 },
      },
      {
        batch_size: 4,
        compute_input: { count: 1, ns: 0 },
        compute_infer: { count: 1, ns: 2_000_000 },
        compute_output: { count: 1, ns: 0 },
      },
    ]);
  });
});

describe("sumStatistics", () => {
  it("adds workers' statistics per model version, keeps the latest inference, sorts by name and version", () => {
    const a = new VersionStatistics("digits", "1");
    a.executed(2, 0.001, 1);
    a.request("success", 0.002, 500);
    const b = new VersionStatistics("digits", "1");
    b.executed(2, 0.003, 1);
    b.executed(8, 0.004, 2);
    b.request("failed", 0.001, 400);
    const other = new VersionStatistics("breast-cancer", "1");
    const [bc, digits, ...rest] = sumStatistics([[a.snapshot()], [b.snapshot(), other.snapshot()]]);
    expect(rest).toEqual([]);
    expect(bc!.name).toBe("breast-cancer");
    expect(digits).toMatchObject({ name: "digits", last_inference: 500, inference_count: 12, execution_count: 3 });
    expect(digits!.inference_stats.success).toEqual({ count: 1, ns: 2_000_000 });
    expect(digits!.inference_stats.fail).toEqual({ count: 1, ns: 1_000_000 });
    expect(digits!.inference_stats.compute_infer).toEqual({ count: 4, ns: 12_000_000 });
    expect(digits!.batch_stats.map((x) => [x.batch_size, x.compute_infer])).toEqual([
      [2, { count: 2, ns: 4_000_000 }],
      [8, { count: 1, ns: 4_000_000 }],
    ]);
  });
});
