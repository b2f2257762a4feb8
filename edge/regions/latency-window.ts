/** The last `size` latency samples of a region, in ms (a ring buffer): what the hedge delay is computed from. */
export class LatencyWindow {
  readonly #samples: number[] = [];
  readonly #size: number;
  #next = 0;

  /** @param size samples kept. Default 100. */
  constructor(size = 100) {
    if (!Number.isInteger(size) || size < 1)
      throw new Error(`LatencyWindow size must be a positive integer, got ${size}`);
    this.#size = size;
  }

  push(ms: number): void {
    if (this.#samples.length < this.#size) this.#samples.push(ms);
    else this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#size;
  }

  /** The kept samples, in no particular order. */
  values(): readonly number[] {
    return this.#samples;
  }
}
