import {
  Counter,
  type CounterConfiguration,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type Registry,
} from "prom-client";

/**
 * prom-client metrics fed from plain numbers on the request path. prom-client hashes and validates the labels on
 * every `inc`, `set` and `observe`, even on a bound child; at ~10k requests/s per core that was several percent
 * of the pool's CPU (docs/performance.md). Here a series is a cell the request path adds to, and prom-client
 * is told at scrape time, through its public API: the `collect` hook of a Counter or Gauge, and a Histogram
 * whose `get()` answers for its cells. `deferred-metrics.test.ts` holds each to what prom-client's own metric
 * writes for the same observations (text, JSON, a cluster's aggregation).
 */

/** `map`'s value for `key`, made by `make` the first time it is asked for. */
export function getOrMake<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** A number on the request path: plain arithmetic, handed to prom-client only when scraped. */
export interface Cell {
  value: number;
}

/** A counter whose increments are additions to plain cells, flushed into the Counter by its `collect` hook. */
export function deferredCounter<L extends string>(
  config: CounterConfiguration<L>,
): (labels: Record<L, string>) => Cell {
  const cells = new Map<string, { labels: Partial<Record<L, string>>; cell: Cell }>();
  new Counter<L>({
    ...config,
    collect() {
      for (const { labels, cell } of cells.values()) {
        if (cell.value > 0) this.inc(labels, cell.value);
        cell.value = 0;
      }
    },
  });
  return (labels) => getOrMake(cells, JSON.stringify(labels), () => ({ labels, cell: { value: 0 } })).cell;
}

/** A gauge cell of one model version instance; `dispose()` when that instance is gone. */
export interface GaugeCell extends Cell {
  dispose(): void;
}

/**
 * A gauge read from plain cells at scrape time. Each model version instance gets its own cell: a version
 * reloaded while its old instance still finishes requests has two, and the series reports their sum (or, with
 * `combine` "max", the largest: for a figure each instance holds whole, such as a config's held-out share). A
 * disposed cell stops counting, and a series with no cell left is no longer exported.
 */
export function collectedGauge<L extends string>(
  config: GaugeConfiguration<L>,
  combine: "sum" | "max" = "sum",
): (labels: Record<L, string>) => GaugeCell {
  const series = new Map<string, { labels: Partial<Record<L, string>>; cells: Set<Cell> }>();
  new Gauge<L>({
    ...config,
    collect() {
      this.reset();
      for (const { labels, cells } of series.values()) {
        let value = combine === "sum" ? 0 : Number.NEGATIVE_INFINITY;
        for (const cell of cells) value = combine === "sum" ? value + cell.value : Math.max(value, cell.value);
        this.set(labels, value);
      }
    },
  });
  return (labels) => {
    const key = JSON.stringify(labels);
    const { cells } = getOrMake(series, key, () => ({ labels, cells: new Set<Cell>() }));
    const cell: GaugeCell = {
      value: 0,
      dispose() {
        cells.delete(cell);
        if (cells.size === 0 && series.get(key)?.cells === cells) series.delete(key);
      },
    };
    cells.add(cell);
    return cell;
  };
}

/** One series of a deferred histogram, as the request path sees it. */
export interface HistogramCell {
  observe(value: number): void;
}

export interface DeferredHistogramConfiguration {
  name: string;
  help: string;
  labelNames: readonly string[];
  buckets: readonly number[];
  registers: Registry[];
}

/** What a Histogram's `get()` resolves to: prom-client's public type. */
type HistogramData = Awaited<ReturnType<Histogram["get"]>>;

/**
 * A histogram whose observations are additions to plain per-series arrays (counts per bucket, the last for
 * values above every bound; sum; count). It is a prom-client Histogram, registered as one, whose `get()`
 * answers from those arrays in the shape the Histogram declares (`_bucket` per `le`, cumulative, then `+Inf`,
 * `_sum`, `_count`), so the JSON a cluster primary sums, and the text made from it, are an ordinary histogram's.
 * Observe through `cell(labels)`, never through the Histogram's own `observe`. Its registry is read through
 * `getMetricsAsJSON()` (and `AggregatorRegistry.aggregate` for text), the public road: prom-client's own text
 * writer reads a Histogram's private state instead of `get()`.
 */
export class DeferredHistogram extends Histogram {
  readonly #name: string;
  readonly #bounds: readonly number[];
  readonly #series = new Map<
    string,
    { labels: Record<string, string>; counts: Float64Array; sum: number; count: number }
  >();

  constructor(config: DeferredHistogramConfiguration) {
    super({ ...config, buckets: [...config.buckets] });
    this.#name = config.name;
    this.#bounds = config.buckets;
  }

  /** The series of `labels`: made on first use, kept for the life of the process, exported once observed. */
  cell(labels: Record<string, string>): HistogramCell {
    const bounds = this.#bounds;
    const series = getOrMake(this.#series, JSON.stringify(labels), () => ({
      labels,
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
    }));
    return {
      observe(value) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        series.counts[i]! += 1;
        series.sum += value;
        series.count += 1;
      },
    };
  }

  override async get(): Promise<HistogramData> {
    const own = await super.get();
    const name = this.#name;
    const values: HistogramData["values"] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      // As prom-client's own Histogram: a series appears with its first observation (a version swapped out
      // before it answered anything leaves nothing behind).
      if (count === 0) continue;
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: count, metricName: `${name}_bucket` });
      values.push({ labels: { ...labels }, value: sum, metricName: `${name}_sum` });
      values.push({ labels: { ...labels }, value: count, metricName: `${name}_count` });
    }
    return { ...own, values };
  }
}
