import type { AnswerKey } from "../../protocol/cache-key.ts";
import { Lru } from "./lru.ts";

/** What the cache keeps of an answer: the model version that produced it and its probabilities. */
export interface CachedAnswer {
  version: string;
  /** `[batch, classes]`, row-major. */
  probs: number[];
  /**
   * The answer's `predictions` as JSON text (protocol/responses.ts `predictionsJson`), kept in the isolate's tier
   * only: a hit then answers without rebuilding and serialising them. The shared tier keeps `version` and `probs`
   * alone, so an answer it returns has none.
   */
  predictionsJson?: string;
}

/** Which tier answered a lookup: the isolate's LRU, the Workers Cache API, or neither. */
export type CacheTier = "l1" | "l2" | "miss";

export interface ResponseCacheOptions {
  /** Lifetime of an answer, in seconds. */
  ttlS: number;
  maxEntries: number;
  maxBytes: number;
  /**
   * The colo's shared cache (`caches.default`, or the local stack's in-isolate stand-in, edge/local/);
   * undefined runs with the in-isolate tier alone.
   */
  shared: Pick<Cache, "match" | "put"> | undefined;
}

/** Writes to the shared tier: begun (in `waitUntil`), done, failed (each failure is logged where it is awaited). */
export interface SharedWrites {
  started: number;
  written: number;
  failed: number;
}

/** The Cache API needs a URL; this host is never resolved, it only names entries. */
export const CACHE_ORIGIN = "https://cache.edgecascade.internal";

interface Stored extends CachedAnswer {
  expiresAt: number;
}

function isStored(x: unknown): x is Stored {
  const s = x as Stored;
  return (
    typeof s === "object" &&
    s !== null &&
    typeof s.version === "string" &&
    typeof s.expiresAt === "number" &&
    Array.isArray(s.probs) &&
    s.probs.every((p) => typeof p === "number")
  );
}

/**
 * Two tiers: an LRU in the isolate (no I/O, bounded by entries and bytes) in front of the Workers Cache
 * API (shared by the isolates of a colo). Keys come from protocol/cache-key.ts and include the model
 * version, so answers of an old version are simply never looked up again: the LRU's is the raw bytes, the
 * Cache API's a SHA-256 of them (a URL), taken only when the LRU misses. An L2 hit is copied into L1.
 */
export class ResponseCache {
  readonly #lru: Lru<Stored>;
  readonly #options: ResponseCacheOptions;
  readonly #writes: SharedWrites = { started: 0, written: 0, failed: 0 };

  constructor(options: ResponseCacheOptions) {
    this.#options = options;
    this.#lru = new Lru({ maxEntries: options.maxEntries, maxBytes: options.maxBytes });
  }

  get entries(): number {
    return this.#lru.size;
  }

  /** The shared tier's writes since the isolate started (a copy). */
  get writes(): SharedWrites {
    return { ...this.#writes };
  }

  /** A lookup: the isolate's tier by `key.local`, then the shared one by `key.shared()`. */
  async get(key: AnswerKey, now: number): Promise<{ tier: CacheTier; answer?: CachedAnswer }> {
    const local = this.local(key, now);
    return local ? { tier: "l1", answer: local } : this.shared(key, now);
  }

  /** The isolate's tier alone, at once: a hit needs no promise (serve.ts asks this first). */
  local(key: AnswerKey, now: number): CachedAnswer | undefined {
    return this.#lru.get(key.local, now);
  }

  /** The shared tier alone (`get` after a local miss): an L2 hit is copied into L1. */
  async shared(key: AnswerKey, now: number): Promise<{ tier: CacheTier; answer?: CachedAnswer }> {
    const shared = this.#options.shared;
    if (!shared) return { tier: "miss" };
    let hit: Response | undefined;
    try {
      hit = await shared.match(new Request(`${CACHE_ORIGIN}/answers/${await key.shared()}`));
    } catch (err) {
      // The Cache API is I/O and can fail; a cache that cannot answer is a miss, never a failed request.
      console.warn(`cache lookup failed: ${(err as Error).message}`);
      return { tier: "miss" };
    }
    if (!hit) return { tier: "miss" };
    // Read as text once: its length is the entry's size in L1, so the answer need not be serialised again.
    let text: string;
    let stored: unknown;
    try {
      text = await hit.text();
      stored = JSON.parse(text);
    } catch {
      return { tier: "miss" };
    }
    if (!isStored(stored) || now >= stored.expiresAt) return { tier: "miss" };
    // Only the fields it must hold: a `predictionsJson` in the shared tier would be text no check has read.
    const kept: Stored = { version: stored.version, probs: stored.probs, expiresAt: stored.expiresAt };
    this.#remember(key.local, kept, text.length);
    return { tier: "l2", answer: kept };
  }

  /** Store an answer: in L1 at once; the returned promise is the L2 write (hand it to waitUntil). */
  put(key: AnswerKey, answer: CachedAnswer, now: number): Promise<void> {
    const expiresAt = now + this.#options.ttlS * 1000;
    const stored: Stored = { ...answer, expiresAt };
    const body = JSON.stringify({ version: answer.version, probs: answer.probs, expiresAt });
    this.#remember(key.local, stored, body.length + (answer.predictionsJson?.length ?? 0));
    const shared = this.#options.shared;
    if (!shared) return Promise.resolve();
    const writes = this.#writes;
    writes.started++;
    return key
      .shared()
      .then((digest) => {
        const response = new Response(body, {
          headers: { "content-type": "application/json", "cache-control": `max-age=${this.#options.ttlS}` },
        });
        return shared.put(new Request(`${CACHE_ORIGIN}/answers/${digest}`), response);
      })
      .then(
        () => {
          writes.written++;
        },
        (err: unknown) => {
          writes.failed++;
          throw err;
        },
      );
  }

  /** Keep an answer in L1; `jsonLength` (its JSON text) is a fair proxy for the heap it holds. */
  #remember(key: string, stored: Stored, jsonLength: number): void {
    this.#lru.set(key, stored, jsonLength + key.length, stored.expiresAt);
  }
}
