import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { collectedGauge, DeferredHistogram, deferredCounter } from "./deferred-metrics.ts";

/**
 * The contract: each deferred metric writes what prom-client's own metric of the same kind writes for the same
 * observations: the JSON a cluster primary sums (`get()`), that JSON summed over processes, and the text.
 */

const BUCKETS = [0.001, 0.01, 0.1, 1];
const LABELS = ["model", "version"] as const;
/** Values on, between, below and above the bounds, for two series. */
const OBSERVATIONS: [Record<(typeof LABELS)[number], string>, number][] = [
  [{ model: "digits", version: "1" }, 0.0005],
  [{ model: "digits", version: "1" }, 0.001],
  [{ model: "digits", version: "1" }, 0.0011],
  [{ model: "digits", version: "1" }, 0.5],
  [{ model: "digits", version: "1" }, 7],
  [{ model: "digits", version: "2" }, 0.01],
  [{ model: "digits", version: "2" }, 0],
];

function histograms() {
  const real = new Registry();
  const ours = new Registry();
  const config = { name: "h_seconds", help: "a histogram", labelNames: LABELS, buckets: BUCKETS };
  const promHistogram = new Histogram({ ...config, registers: [real] });
  const deferred = new DeferredHistogram({ ...config, registers: [ours] });
  for (const [labels, value] of OBSERVATIONS) {
    promHistogram.observe(labels, value);
    deferred.cell(labels).observe(value);
  }
  return { real, ours, promHistogram, deferred };
}

describe("DeferredHistogram against prom-client's Histogram", () => {
  it("answers get() with the same metric and values (exemplars, which neither records, aside)", async () => {
    const { promHistogram, deferred } = histograms();
    const withoutExemplars = (data: Awaited<ReturnType<Histogram["get"]>>) => ({
      ...data,
      values: data.values.map(({ labels, value, metricName }) => ({ labels, value, metricName })),
    });
    const [expected, got] = [await promHistogram.get(), await deferred.get()];
    expect(withoutExemplars(got)).toEqual(withoutExemplars(expected));
    expect(got.values.length).toBe(2 * (BUCKETS.length + 3));
  });

  it("writes the same text, summed over processes too", async () => {
    const [a, b] = [histograms(), histograms()];
    expect(await AggregatorRegistry.aggregate([await a.ours.getMetricsAsJSON()]).metrics()).toBe(
      await a.real.metrics(),
    );
    const summed = async (side: "real" | "ours") =>
      AggregatorRegistry.aggregate([await a[side].getMetricsAsJSON(), await b[side].getMetricsAsJSON()]).metrics();
    const text = await summed("ours");
    expect(text).toBe(await summed("real"));
    expect(text).toContain('h_seconds_bucket{le="0.001",model="digits",version="1"} 4\n');
    expect(text).toContain('h_seconds_count{model="digits",version="2"} 4\n');
  });

  it("has no series before an observation", async () => {
    const registry = new Registry();
    const deferred = new DeferredHistogram({
      name: "e",
      help: "e",
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [registry],
    });
    deferred.cell({ model: "digits", version: "1" });
    expect((await deferred.get()).values).toEqual([]);
    expect(await new Histogram({ name: "e2", help: "e", labelNames: LABELS, registers: [] }).get()).toMatchObject({
      values: [],
    });
  });
});

describe("deferredCounter against prom-client's Counter", () => {
  it("writes the same text and JSON for the same increments, between scrapes too", async () => {
    const [real, ours] = [new Registry(), new Registry()];
    const counter = new Counter({ name: "c_total", help: "a counter", labelNames: ["route"], registers: [real] });
    const cell = deferredCounter({ name: "c_total", help: "a counter", labelNames: ["route"], registers: [ours] });
    for (const [route, n] of [
      ["a", 1],
      ["b", 3],
      ["a", 2],
    ] as const) {
      counter.inc({ route }, n);
      cell({ route }).value += n;
    }
    expect(await ours.metrics()).toBe(await real.metrics());
    counter.inc({ route: "b" }, 5);
    cell({ route: "b" }).value += 5;
    expect(await ours.getMetricsAsJSON()).toEqual(await real.getMetricsAsJSON());
    expect(await ours.metrics()).toContain('c_total{route="b"} 8\n');
  });
});

describe("collectedGauge against prom-client's Gauge", () => {
  it("writes the sum of a series' cells as prom-client's gauge writes the same value; a disposed last cell drops the series", async () => {
    const [real, ours] = [new Registry(), new Registry()];
    const gauge = new Gauge({ name: "g", help: "a gauge", labelNames: LABELS, registers: [real] });
    const cell = collectedGauge({ name: "g", help: "a gauge", labelNames: LABELS, registers: [ours] });
    const old = cell({ model: "digits", version: "1" });
    const reloaded = cell({ model: "digits", version: "1" });
    const other = cell({ model: "digits", version: "2" });
    old.value = 2;
    reloaded.value = 1;
    other.value = 5;
    gauge.set({ model: "digits", version: "1" }, 3);
    gauge.set({ model: "digits", version: "2" }, 5);
    expect(await ours.metrics()).toBe(await real.metrics());
    other.dispose();
    gauge.remove({ model: "digits", version: "2" });
    expect(await ours.getMetricsAsJSON()).toEqual(await real.getMetricsAsJSON());
    expect(await ours.metrics()).not.toContain('version="2"');
  });
});
