/**
 * A value created on first use and then kept. Concurrent first callers share one creation; a failed
 * creation is not kept, so the next caller tries again (a transient failure does not poison the isolate).
 */
export class Lazy<T> {
  readonly #create: () => Promise<T>;
  #pending: Promise<T> | undefined;
  #value: { ok: true; value: T } | undefined;
  #lastError: unknown;

  constructor(create: () => Promise<T>) {
    this.#create = create;
  }

  /** The value, creating it if no creation is under way. */
  get(): Promise<T> {
    if (this.#value) return Promise.resolve(this.#value.value);
    this.#pending ??= this.#create().then(
      (value) => {
        this.#value = { ok: true, value };
        this.#pending = undefined;
        this.#lastError = undefined;
        return value;
      },
      (err: unknown) => {
        this.#pending = undefined;
        this.#lastError = err;
        throw err;
      },
    );
    return this.#pending;
  }

  /** The value once created (no promise, for hot paths); undefined before. */
  get value(): T | undefined {
    return this.#value?.value;
  }

  /** Whether the value exists (creation finished successfully). */
  get ready(): boolean {
    return this.#value !== undefined;
  }

  /**
   * Forget the value (it was released: an evicted session), so that the next `get` creates it again; returns
   * it. A creation under way is left alone (nothing to forget yet).
   */
  reset(): T | undefined {
    const value = this.#value?.value;
    this.#value = undefined;
    return value;
  }

  /** Why the last creation failed, until one succeeds. */
  get lastError(): unknown {
    return this.#lastError;
  }
}
