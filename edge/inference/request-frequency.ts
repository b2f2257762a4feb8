/**
 * How often each model was asked for lately, pure: a count per model, halved every `window` counts (TinyLFU's
 * aging), so that what was popular an hour ago weighs less than what is popular now. The session pool admits
 * a model past its budget only if it was asked for more often than the session it would evict.
 */
export class RequestFrequency<K> {
  readonly #window: number;
  readonly #counts = new Map<K, number>();
  #since = 0;

  constructor(window: number) {
    this.#window = window;
  }

  /** `key` was asked for once more. */
  count(key: K): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (++this.#since >= this.#window) this.#age();
  }

  /** How often `key` was asked for lately. */
  of(key: K): number {
    return this.#counts.get(key) ?? 0;
  }

  /** Halve every count, forgetting those that reach 0. */
  #age(): void {
    this.#since = 0;
    for (const [key, n] of this.#counts) {
      const half = n >> 1;
      if (half === 0) this.#counts.delete(key);
      else this.#counts.set(key, half);
    }
  }
}
