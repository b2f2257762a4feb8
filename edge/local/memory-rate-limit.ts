/**
 * The Workers rate-limiting binding's `limit({key})` kept in the isolate (LOCAL_PLATFORM "memory"): at most
 * `limit` calls per key in each fixed window of `periodS` seconds. The binding counts per colo and
 * approximately; this counts per isolate and exactly, which is all the local stack (one isolate) needs to keep
 * a limiter on the path without Miniflare's simulation.
 */
export class MemoryRateLimit implements RateLimit {
  readonly #limit: number;
  readonly #periodMs: number;
  readonly #now: () => number;
  #windowStart = 0;
  #counts = new Map<string, number>();

  constructor(limit: number, periodS: number, now: () => number = Date.now) {
    this.#limit = limit;
    this.#periodMs = periodS * 1000;
    this.#now = now;
  }

  async limit({ key }: RateLimitOptions): Promise<RateLimitOutcome> {
    const now = this.#now();
    if (now - this.#windowStart >= this.#periodMs) {
      this.#windowStart = now - (now % this.#periodMs);
      this.#counts = new Map();
    }
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return { success: count <= this.#limit };
  }
}
