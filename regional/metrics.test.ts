import { describe, expect, it } from "vitest";
import { createMetrics } from "./metrics.ts";

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
    v1.executed(4, 0.001);
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
    expect(await lines(metrics, "edgecascade_inference_pending_requests")).toEqual([
      'edgecascade_inference_pending_requests{model="digits",version="100"} 1',
    ]);
  });
});
