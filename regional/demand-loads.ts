import { DeadlineExceeded, ModelNotReady } from "../protocol/errors.ts";
import { type EvictionCandidate, makeRoom } from "../protocol/memory-room.ts";
import { nowUs } from "./clock.ts";
import type { ModelLifecycle } from "./model-lifecycle.ts";

/**
 * The worker's model memory within `--model-memory-mb` (the I/O around memory-budget.ts and
 * protocol/memory-room.ts): before a load, room
 * is made for the version it will bring, by evicting the least recently used models that may be evicted;
 * the room is held (a reservation) until the load has ended, so that loads running at once never count the
 * same free memory twice; an evicted version's memory counts until its last request is answered and its
 * session released, and the load waits for that. Loads started by requests also take one of a few slots, so
 * that a burst of first requests for cold models does not spend every core on loads while hot models wait.
 */
export class MemoryBudget {
  readonly budgetBytes: number;
  readonly #models: () => Iterable<ModelLifecycle>;
  #reserved = 0;
  #evictions = 0;

  constructor(budgetBytes: number, models: () => Iterable<ModelLifecycle>) {
    this.budgetBytes = budgetBytes;
    this.#models = models;
  }

  /** Versions evicted to make room so far (`edgecascade_model_evictions_total` counts the same, for /metrics). */
  get evictions(): number {
    return this.#evictions;
  }

  /** Every loaded, retiring and reserved byte counted now. */
  usedBytes(): number {
    let used = this.#reserved;
    for (const m of this.#models()) used += m.residentBytes();
    return used;
  }

  /**
   * Room for `bytes` more for `name`: evicts what `makeRoom` picks, reserves the room and waits until the
   * evicted versions' sessions are released. Resolves to the reservation's release (call it once the load has
   * ended, well or not: the loaded version then counts for itself). 503 when there cannot be room, with why.
   */
  async room(name: string, bytes: number): Promise<() => void> {
    const candidates: EvictionCandidate[] = [];
    const byName = new Map<string, ModelLifecycle>();
    for (const m of this.#models()) {
      const evictable = m.name === name ? undefined : m.evictableBytes();
      if (evictable === undefined) continue;
      candidates.push({ name: m.name, bytes: evictable, lastUsed: m.lastUsed });
      byName.set(m.name, m);
    }
    const room = makeRoom(bytes, this.usedBytes(), this.budgetBytes, candidates);
    if (!room.fits)
      throw new ModelNotReady(`model "${name}" cannot be loaded within --model-memory-mb: ${room.reason}`, 1);
    const why = `room for "${name}" (${(bytes / 2 ** 20).toFixed(1)} MB) within --model-memory-mb`;
    this.#evictions += room.evict.length;
    const released = room.evict.map((victim) => byName.get(victim)!.evict(why));
    this.#reserved += bytes;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.#reserved -= bytes;
    };
    try {
      await Promise.all(released);
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }
}

/** At most `size` operations at once; the rest wait in turn. */
export class LoadSlots {
  readonly #size: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      return await op();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }
}

/**
 * `loaded` awaited within the request's deadline (`deadlineUs` on the `nowUs` clock; Infinity: none): a
 * request that cannot wait any longer gets its 504 while the load goes on for the requests after it.
 */
export function withinDeadline<T>(loaded: Promise<T>, deadlineUs: number, model: string): Promise<T> {
  if (!Number.isFinite(deadlineUs)) return loaded;
  const leftMs = (deadlineUs - nowUs()) / 1000;
  const late = () =>
    new DeadlineExceeded(`the deadline passed while model "${model}" loaded for its first request; retry shortly`);
  if (leftMs <= 0) return Promise.reject(late());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), leftMs);
    loaded.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
