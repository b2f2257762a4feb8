import type { InputRows } from "../../protocol/tensor.ts";
import type { ModelVersion } from "../model-version.ts";
import { disagreements, nextShadowMove, offerDecision } from "./shadow-policy.ts";
import type { ShadowResult } from "./step-evidence.ts";

/** The two versions a shadow run compares, if both are still loaded. */
export type ShadowPair = () => { stable: ModelVersion; candidate: ModelVersion } | undefined;

export interface ShadowOptions {
  /** The versions of the rollout, looked up when a copy runs (a rollback in between leaves none). */
  pair: ShadowPair;
  /** Copies that may wait; the next one is dropped. */
  maxQueue: () => number;
  /** Share of offered copies taken, 0 to 1. */
  sample: () => number;
  /** Where each comparison goes. */
  record: (result: ShadowResult) => void;
  /**
   * A run that failed (`version`: whose; undefined: the runner's own step), with why. Its comparison is still
   * recorded, with that version's run counted as an error; nothing is thrown.
   */
  failed: (version: ModelVersion | undefined, error: Error) => void;
  random?: () => number;
  /** Milliseconds, for the runs' durations. Default `performance.now`. */
  now?: () => number;
}

/**
 * Shadow work of one model's rollout in one pool process: copies of live requests, taken after their answer
 * was computed, run through both versions (in alternating order, each timed) to compare their labels and
 * latencies. It never gets in the way of live requests: a copy is dropped when `maxQueue` copies wait; copies
 * run one at a time, straight through the sessions (never in the batchers' queues, so they cannot make a
 * live request wait in a queue or be refused), and only while no live request of either version is queued or
 * running. A live request arriving meanwhile waits at most for the one pair of runs in progress. Each timed run
 * follows an untimed run of the same version on the same rows, so that neither version is timed cold while the
 * other is warm from live traffic (at a shadow-only step, the stable version's caches always are).
 */
export class ShadowRunner {
  readonly #options: ShadowOptions;
  readonly #random: () => number;
  readonly #now: () => number;
  #queue: InputRows[] = [];
  #running = false;
  #scheduled = false;
  #order = 0;

  constructor(options: ShadowOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => performance.now());
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Offer a copy of an answered request's rows; returns whether it was queued (undefined: not sampled). The
   * rows are copied here: the caller's buffer may be reused once its answer is sent.
   */
  offer(rows: InputRows): boolean | undefined {
    const decision = offerDecision(
      this.#random(),
      this.#options.sample(),
      this.#queue.length,
      this.#options.maxQueue(),
    );
    if (decision !== "queued") return decision === "unsampled" ? undefined : false;
    this.#queue.push({ ...rows, data: rows.data.slice() });
    this.#schedule(false);
    return true;
  }

  /** Drop every waiting copy (the rollout ended). */
  clear(): void {
    this.#queue = [];
  }

  #schedule(busy: boolean): void {
    if (this.#scheduled || this.#running || this.#queue.length === 0) return;
    this.#scheduled = true;
    const go = () => {
      this.#scheduled = false;
      this.#pump().catch((err: Error) => this.#options.failed(undefined, err));
    };
    // After the current I/O phase; while live requests are queued or running, look again in a millisecond.
    if (busy) setTimeout(go, 1);
    else setImmediate(go);
  }

  async #pump(): Promise<void> {
    const pair = this.#options.pair();
    const live = pair ? pair.stable.submitted + pair.candidate.submitted : 0;
    const move = nextShadowMove(!!pair, live, this.#queue.length);
    if (move === "clear") this.clear();
    if (move === "wait") this.#schedule(true);
    const rows = move === "run" ? this.#queue.shift() : undefined;
    if (!pair || !rows) return;
    this.#running = true;
    const stableLease = pair.stable.lease();
    const candidateLease = pair.candidate.lease();
    try {
      const time = async (version: ModelVersion) => {
        try {
          await version.shadowRun(rows.data, rows.batch);
          const t0 = this.#now();
          const probs = await version.shadowRun(rows.data, rows.batch);
          return { probs, ms: this.#now() - t0 };
        } catch (err) {
          this.#options.failed(version, err as Error);
          return undefined;
        }
      };
      const stableFirst = this.#order++ % 2 === 0;
      const first = await time(stableFirst ? pair.stable : pair.candidate);
      const second = await time(stableFirst ? pair.candidate : pair.stable);
      const [stable, candidate] = stableFirst ? [first, second] : [second, first];
      const differ = stable && candidate ? disagreements(stable.probs, candidate.probs, rows.batch) : 0;
      this.#options.record({
        rows: rows.batch,
        stableMs: stable?.ms,
        candidateMs: candidate?.ms,
        disagreements: differ,
      });
    } finally {
      stableLease.release();
      candidateLease.release();
      this.#running = false;
      this.#schedule(false);
    }
  }
}
