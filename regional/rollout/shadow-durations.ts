import { nearestRank } from "../../protocol/quantile.ts";

/**
 * The last `size` durations of one version's shadow runs, and their quantiles. Sorting a full window costs
 * tens of microseconds, so a quantile is recomputed only after `refreshEvery` new samples (or on the first
 * read); between refreshes it may lag by that many samples.
 */
export class ShadowDurations {
  readonly #samples: Float64Array;
  #next = 0;
  #count = 0;
  #sinceSort = Number.POSITIVE_INFINITY;
  #sorted: Float64Array = new Float64Array(0);
  readonly #refreshEvery: number;

  constructor(size = 1000, refreshEvery = 50) {
    this.#samples = new Float64Array(size);
    this.#refreshEvery = refreshEvery;
  }

  get count(): number {
    return this.#count;
  }

  add(ms: number): void {
    this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#samples.length;
    this.#count = Math.min(this.#count + 1, this.#samples.length);
    this.#sinceSort++;
  }

  /** The `q` quantile (nearest rank) of the window, or null while it is empty. */
  quantile(q: number): number | null {
    if (this.#count === 0) return null;
    if (this.#sinceSort >= this.#refreshEvery) {
      this.#sorted = this.#samples.slice(0, this.#count).sort();
      this.#sinceSort = 0;
    }
    return nearestRank(this.#sorted, q);
  }

  clear(): void {
    this.#next = 0;
    this.#count = 0;
    this.#sinceSort = Number.POSITIVE_INFINITY;
  }
}
