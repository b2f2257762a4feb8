import { describe, expect, it } from "vitest";
import { aggregateMetrics, createMetrics } from "./metrics.ts";

/** The exposition lines of one metric, e.g. `gauge{model="digits",version="1"} 3`. */
async function lines(metrics: ReturnType<typeof createMetrics>, name: string): Promise<string[]> {
  return (await metrics.text()).split("\n").filter((l) => l.startsWith(`${name}{`));
}

describe("per-version gauges", () => {
  it("two instances of one version (a reload while the old one drains) are summed, not overwritten", async () => {
    const metrics = createMetrics();
    const old = metrics.recorder.model("digits", "1");
    old.pending(1);
    old.pending(1);
    old.queueDepth(2);
    const reloaded = metrics.recorder.model("digits", "1");
    reloaded.pending(1);
    reloaded.queueDepth(1);
    expect(await lines(metrics, "edgecascade_inference_pending_requests")).toEqual([
      'edgecascade_inference_pending_requests{model="digits",version="1"} 3',
    ]);
    expect(await lines(metrics, "edgecascade_inference_queue_depth")).toEqual([
      'edgecascade_inference_queue_depth{model="digits",version="1"} 3',
    ]);

    // The old instance drains and is disposed: the series goes on with the reloaded instance alone.
    old.pending(-1);
    old.pending(-1);
    old.queueDepth(0);
    old.dispose();
    reloaded.pending(1);
    expect(await lines(metrics, "edgecascade_inference_pending_requests")).toEqual([
      'edgecascade_inference_pending_requests{model="digits",version="1"} 2',
    ]);
  });

  it("a disposed version's gauges disappear; its counters stay", async () => {
    const metrics = createMetrics();
    const v1 = metrics.recorder.model("digits", "1");
    v1.executed(4, 0.001, 2);
    const v2 = metrics.recorder.model("digits", "2");
    v1.dispose();
    for (const name of ["edgecascade_inference_pending_requests", "edgecascade_inference_queue_depth"]) {
      expect(await lines(metrics, name)).toEqual([`${name}{model="digits",version="2"} 0`]);
    }
    expect(await lines(metrics, "edgecascade_inference_rows_total")).toEqual([
      'edgecascade_inference_rows_total{model="digits",version="1"} 4',
    ]);
    v2.dispose();
    expect(await lines(metrics, "edgecascade_inference_queue_depth")).toEqual([]);
  });

  it("keeps nothing of disposed versions: a hundred swaps leave the serving version's series alone", async () => {
    const metrics = createMetrics();
    let serving = metrics.recorder.model("digits", "1");
    for (let v = 2; v <= 100; v++) {
      const next = metrics.recorder.model("digits", String(v));
      serving.dispose();
      serving = next;
    }
    serving.pending(1);
    serving.ready(true);
    // Every series of the pool's (gauges, counters, histograms) that names a version names 100.
    const text = await metrics.text();
    const ours = text.split("\n").filter((l) => l.startsWith("edgecascade_"));
    const versions = new Set(ours.flatMap((l) => [...l.matchAll(/version="([^"]*)"/g)].map((m) => m[1])));
    expect(versions).toEqual(new Set(["100"]));
    expect(ours.filter((l) => l.includes('version="100"'))).toEqual([
      'edgecascade_inference_queue_depth{model="digits",version="100"} 0',
      'edgecascade_inference_pending_requests{model="digits",version="100"} 1',
      'edgecascade_model_ready{model="digits",version="100"} 1',
    ]);
  });
});

describe("histograms", () => {
  it("count each observation in the first bucket whose bound holds it, cumulatively, with sum and count", async () => {
    const metrics = createMetrics();
    const model = metrics.recorder.model("digits", "1");
    for (const rows of [1, 2, 3, 64, 65, 1000]) model.executed(rows, 0.0001, 1);
    const name = "edgecascade_inference_batch_size";
    const series = (await metrics.text()).split("\n").filter((l) => l.startsWith(name));
    const bucket = (le: string) => series.find((l) => l.includes(`le="${le}"`))?.split(" ")[1];
    expect([1, 2, 4, 8, 32, 64, 128, 256].map((le) => bucket(String(le)))).toEqual([
      "1",
      "2",
      "3",
      "3",
      "3",
      "4",
      "5",
      "5",
    ]);
    expect(bucket("+Inf")).toBe("6");
    expect(series).toContain(`${name}_sum{model="digits",version="1"} 1135`);
    expect(series).toContain(`${name}_count{model="digits",version="1"} 6`);
    expect(series.filter((l) => l.includes("_bucket{")).every((l) => l.includes('model="digits",version="1"'))).toBe(
      true,
    );
  });

  it("sum across processes like prom-client's own (the cluster's /metrics)", async () => {
    const [a, b] = [createMetrics(), createMetrics()];
    a.recorder.model("digits", "1").request("success", 0.002);
    b.recorder.model("digits", "1").request("success", 0.2);
    const text = await aggregateMetrics([await a.json(), await b.json()]);
    const name = "edgecascade_inference_request_duration_seconds";
    expect(text).toContain(`${name}_count{model="digits",version="1"} 2\n`);
    expect(text).toMatch(new RegExp(`${name}_bucket\\{le="0.0025",model="digits",version="1"\\} 1\\n`));
    expect(text).toMatch(new RegExp(`${name}_bucket\\{le="0.25",model="digits",version="1"\\} 2\\n`));
  });
});
