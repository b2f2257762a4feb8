/**
 * Triton's statistics extension (triton-inference-server/server docs/protocol/extension_statistics.md): per model
 * version, requests that succeeded and failed with their total durations, time queued, time computing, rows
 * inferred, executions, and executions per batch size. Counted with plain additions on the request path
 * (metrics.ts feeds them from the same `ModelRecorder` calls as the Prometheus series); pure apart from that.
 */
import type { InferenceOutcome } from "./recorder.ts";

/** How many, and their total duration in nanoseconds (the extension's `$duration_stat`). */
export interface DurationStat {
  count: number;
  ns: number;
}

/** One entry of `model_stats`, as Triton writes it. */
export interface ModelStatistics {
  name: string;
  version: string;
  /** When the last request ended, in milliseconds since the epoch; 0 before any. */
  last_inference: number;
  /** Rows inferred (Triton counts each row of a batch as one inference). */
  inference_count: number;
  /** Model executions (`session.run` calls). */
  execution_count: number;
  inference_stats: {
    success: DurationStat;
    fail: DurationStat;
    queue: DurationStat;
    compute_input: DurationStat;
    compute_infer: DurationStat;
    compute_output: DurationStat;
  };
  batch_stats: {
    batch_size: number;
    compute_input: DurationStat;
    compute_infer: DurationStat;
    compute_output: DurationStat;
  }[];
}

const NS = 1e9;
const zero = (): DurationStat => ({ count: 0, ns: 0 });
const add = (into: DurationStat, count: number, seconds: number) => {
  into.count += count;
  into.ns += Math.round(seconds * NS);
};

/**
 * The running statistics of one model version. `compute_infer` holds the whole batch step as the batcher times
 * it (copying the rows in, `session.run`, slicing the outputs): onnxruntime-node does not time input and output
 * apart, so `compute_input` and `compute_output` count the same requests with 0 ns. A request in a batch is
 * charged the batch's whole compute time, as Triton charges it.
 */
export class VersionStatistics {
  readonly #name: string;
  readonly #version: string;
  #last = 0;
  #rows = 0;
  #executions = 0;
  readonly #success = zero();
  readonly #fail = zero();
  readonly #queue = zero();
  readonly #compute = zero();
  readonly #batches = new Map<number, DurationStat>();

  constructor(name: string, version: string) {
    this.#name = name;
    this.#version = version;
  }

  /** A request left the queue for a run after `seconds`. */
  queued(seconds: number): void {
    add(this.#queue, 1, seconds);
  }

  /** One run of `rows` rows from `requests` requests took `seconds`. */
  executed(rows: number, seconds: number, requests: number): void {
    this.#rows += rows;
    this.#executions += 1;
    add(this.#compute, requests, seconds * requests);
    let batch = this.#batches.get(rows);
    if (!batch) {
      batch = zero();
      this.#batches.set(rows, batch);
    }
    add(batch, 1, seconds);
  }

  /** A request ended `seconds` after it arrived, at `nowMs` (epoch milliseconds). */
  request(outcome: InferenceOutcome, seconds: number, nowMs: number): void {
    add(outcome === "success" ? this.#success : this.#fail, 1, seconds);
    this.#last = nowMs;
  }

  /** The extension's entry for this version now. */
  snapshot(): ModelStatistics {
    const compute = { ...this.#compute };
    return {
      name: this.#name,
      version: this.#version,
      last_inference: this.#last,
      inference_count: this.#rows,
      execution_count: this.#executions,
      inference_stats: {
        success: { ...this.#success },
        fail: { ...this.#fail },
        queue: { ...this.#queue },
        compute_input: { count: compute.count, ns: 0 },
        compute_infer: compute,
        compute_output: { count: compute.count, ns: 0 },
      },
      batch_stats: [...this.#batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([batch_size, d]) => ({
          batch_size,
          compute_input: { count: d.count, ns: 0 },
          compute_infer: { ...d },
          compute_output: { count: d.count, ns: 0 },
        })),
    };
  }
}

const sumDuration = (a: DurationStat, b: DurationStat): DurationStat => ({ count: a.count + b.count, ns: a.ns + b.ns });

function sumTwo(a: ModelStatistics, b: ModelStatistics): ModelStatistics {
  const batches = new Map<number, ModelStatistics["batch_stats"][number]>();
  for (const s of [...a.batch_stats, ...b.batch_stats]) {
    const seen = batches.get(s.batch_size);
    batches.set(
      s.batch_size,
      seen
        ? {
            batch_size: s.batch_size,
            compute_input: sumDuration(seen.compute_input, s.compute_input),
            compute_infer: sumDuration(seen.compute_infer, s.compute_infer),
            compute_output: sumDuration(seen.compute_output, s.compute_output),
          }
        : s,
    );
  }
  const i = a.inference_stats;
  const j = b.inference_stats;
  return {
    name: a.name,
    version: a.version,
    last_inference: Math.max(a.last_inference, b.last_inference),
    inference_count: a.inference_count + b.inference_count,
    execution_count: a.execution_count + b.execution_count,
    inference_stats: {
      success: sumDuration(i.success, j.success),
      fail: sumDuration(i.fail, j.fail),
      queue: sumDuration(i.queue, j.queue),
      compute_input: sumDuration(i.compute_input, j.compute_input),
      compute_infer: sumDuration(i.compute_infer, j.compute_infer),
      compute_output: sumDuration(i.compute_output, j.compute_output),
    },
    batch_stats: [...batches.values()].sort((x, y) => x.batch_size - y.batch_size),
  };
}

/**
 * Several processes' statistics as one (a cluster's workers, as the primary sums `/metrics`): counts and
 * durations added per model version, the latest `last_inference`; sorted by name, then version.
 */
export function sumStatistics(perProcess: readonly (readonly ModelStatistics[])[]): ModelStatistics[] {
  const byVersion = new Map<string, ModelStatistics>();
  for (const list of perProcess) {
    for (const s of list) {
      const key = `${s.name}\u0000${s.version}`;
      const seen = byVersion.get(key);
      byVersion.set(key, seen ? sumTwo(seen, s) : s);
    }
  }
  return [...byVersion.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}
