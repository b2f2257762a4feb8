export interface LruOptions {
  /** Most entries kept. 0 disables the cache. */
  maxEntries: number;
  /** Most bytes kept, summing each entry's declared size. 0 disables the cache. */
  maxBytes: number;
}

interface Slot<V> {
  value: V;
  bytes: number;
  /** Unix ms after which the entry is stale. */
  expiresAt: number;
}

/**
 * Least-recently-used map bounded by entry count and by bytes, with a per-entry expiry. A Map iterates in
 * insertion order, so re-inserting on every hit keeps the least recently used entry first.
 */
export class Lru<V> {
  readonly #slots = new Map<string, Slot<V>>();
  readonly #options: LruOptions;
  #bytes = 0;

  constructor(options: LruOptions) {
    for (const field of ["maxEntries", "maxBytes"] as const) {
      if (!Number.isInteger(options[field]) || options[field] < 0) {
        throw new Error(`Lru ${field} must be a non-negative integer, got ${options[field]}`);
      }
    }
    this.#options = options;
  }

  get size(): number {
    return this.#slots.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string, now: number): V | undefined {
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    this.#slots.delete(key);
    if (now >= slot.expiresAt) {
      this.#bytes -= slot.bytes;
      return undefined;
    }
    this.#slots.set(key, slot);
    return slot.value;
  }

  /** Store a value; one larger than the whole byte budget is not stored. */
  set(key: string, value: V, bytes: number, expiresAt: number): void {
    this.delete(key);
    const { maxEntries, maxBytes } = this.#options;
    if (maxEntries === 0 || bytes > maxBytes) return;
    this.#slots.set(key, { value, bytes, expiresAt });
    this.#bytes += bytes;
    for (const [oldest, slot] of this.#slots) {
      if (this.#slots.size <= maxEntries && this.#bytes <= maxBytes) break;
      this.#slots.delete(oldest);
      this.#bytes -= slot.bytes;
    }
  }

  delete(key: string): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    this.#slots.delete(key);
    this.#bytes -= slot.bytes;
  }
}
