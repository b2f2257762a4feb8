import { type EvictionCandidate, makeRoom } from "../../protocol/memory-room.ts";
import { type FillRate, refill, type TokenBucket, take } from "../../protocol/token-bucket.ts";
import { RequestFrequency } from "./request-frequency.ts";

/**
 * What one edge session is counted as in the isolate's memory, from its model file's size (docs/edge.md,
 * *Sessions within a budget*): onnxruntime-web's session in the wasm heap (measured with the allocator's
 * high-water mark: 50-59 KB for the sample edge variants, 253 KB for the 64 KB breast-cancer forest, 311 KB for
 * the 204 KB digits MLP), the direct runner's buffers, and its few KB of JavaScript heap (measured in workerd
 * through the inspector, after a collection). Conservative for every kind measured.
 */
export const EDGE_SESSION_BASE_BYTES = 64 * 1024;
/** Bytes of session per byte of model file (measured: 1.3 for the MLP, 3.3 for the forest and the int8 MLP). */
export const EDGE_SESSION_BYTES_PER_FILE_BYTE = 4;

export function edgeSessionBytes(fileBytes: number): number {
  return EDGE_SESSION_BASE_BYTES + EDGE_SESSION_BYTES_PER_FILE_BYTE * fileBytes;
}

/**
 * How often past the budget a session may be created in place of others (EDGE_SESSION_REPLACEMENTS_PER_SECOND): a token
 * bucket of one second's worth (at least one token while the rate is above 0).
 */
export function replacementRate(perS: number): FillRate {
  return { perS, burst: Math.ceil(perS) };
}

/** Least time between two log lines about admissions held back by the rate, in ms (each is counted). */
const DEFERRED_LOG_INTERVAL_MS = 10_000;

/** Requests after which every model's count is halved (`RequestFrequency`): recent popularity counts most. */
export const FREQUENCY_WINDOW = 10_000;

/** A model whose session the pool holds: what it is counted as, and how to let it go. */
export interface PooledModel {
  /** The edge variant's name (`digits-edge`), for logs and /status. */
  readonly name: string;
  /** What its session is counted as (`edgeSessionBytes` of its file). */
  readonly bytes: number;
  /** Release its session (the next use creates it again); resolves once released. */
  evict(): Promise<void>;
}

/** What `/status` shows of the isolate's sessions. */
export interface SessionsView {
  budgetBytes: number;
  residentBytes: number;
  resident: number;
  created: number;
  evictions: number;
  /**
   * Sessions not created after a forwarded answer although TinyLFU admitted them: past the budget, more than
   * EDGE_SESSION_REPLACEMENTS_PER_SECOND would have been created in place of others.
   */
  deferred: number;
  /** Sessions a request waited for (no region answered a model without one): created on the request path. */
  onRequestPath: number;
}

/**
 * The isolate's edge sessions within `EDGE_SESSION_MEMORY_MB`: a session is created on its model's first use
 * (edge-variant.ts), after room is made for it by evicting the least recently used sessions
 * (protocol/memory-room.ts, the pools' rule too), one creation at a time. An evicted session counts until its
 * release has finished. Uses are stamped with a counter, one increment per request, not a clock: the order is
 * all eviction needs.
 */
export class SessionPool {
  readonly budgetBytes: number;
  readonly #resident = new Map<PooledModel, number>();
  /** Evicted sessions whose release has not finished: still counted. */
  readonly #releasing = new Set<PooledModel>();
  /** What `#resident` and `#releasing` count, kept as they change: `usedBytes` is asked on requests' paths. */
  #residentBytes = 0;
  #releasingBytes = 0;
  #reserved = 0;
  #tick = 0;
  #created = 0;
  #evictions = 0;
  #deferred = 0;
  #onRequestPath = 0;
  readonly #replacementRate: FillRate;
  /** Creations past the budget, in place of other sessions (`replacementRate`); full at first use. */
  #replacements: TokenBucket = { tokens: 0, at: Number.NEGATIVE_INFINITY };
  #deferredLoggedAt = Number.NEGATIVE_INFINITY;

  /** `replacements`: how often past the budget a session may be created in place of others; default: unbounded. */
  constructor(budgetBytes: number, replacements: FillRate = replacementRate(Number.POSITIVE_INFINITY)) {
    this.budgetBytes = budgetBytes;
    this.#replacementRate = replacements;
  }

  /**
   * Whether a request for `model`, which has no session, should have one created for it after its answer
   * (serve.ts): yes while it fits without evicting anything; otherwise only if it has been asked for more often
   * lately than the session it would evict, the least recently used (TinyLFU's admission), and if the rate of
   * creations in place of others (`replacementRate`) has one left at `nowMs`: the models of the long tail are
   * forwarded, and never evict the sessions of those asked for more, nor spend the isolate's CPU (its only
   * thread, which every request shares) on sessions that would be evicted before their next request, or on more
   * of them a second than the rate. Counts this request.
   */
  admits(model: PooledModel, nowMs: number): boolean {
    this.#frequency.count(model.name);
    if (this.fitsWithoutEviction(model)) return true;
    const victim = this.#leastRecentlyUsed();
    if (victim === undefined) return true;
    if (this.#frequency.of(model.name) <= this.#frequency.of(victim.name)) return false;
    if (this.#takeReplacement(nowMs)) return true;
    this.#deferred++;
    if (nowMs - this.#deferredLoggedAt >= DEFERRED_LOG_INTERVAL_MS) {
      this.#deferredLoggedAt = nowMs;
      console.log(
        JSON.stringify({
          msg: "edge session deferred",
          model: model.name,
          reason: `more than EDGE_SESSION_REPLACEMENTS_PER_SECOND (${this.#replacementRate.perS}/s) sessions created in place of others; answered without one`,
          deferred: this.#deferred,
        }),
      );
    }
    return false;
  }

  /**
   * A request waits for `model`'s session (no region answered it, serve.ts): created on the request path whatever
   * the admission, since the request needs an answer; counted and logged with `why`, and a creation in place of
   * others takes from the rate when it has one left (so that creations after answers make way for it).
   */
  createsOnRequestPath(model: PooledModel, nowMs: number, why: string): void {
    this.#onRequestPath++;
    if (!this.fitsWithoutEviction(model)) this.#takeReplacement(nowMs);
    console.log(JSON.stringify({ msg: "edge session on the request path", model: model.name, reason: why }));
  }

  #takeReplacement(nowMs: number): boolean {
    const { ok, bucket } = take(refill(this.#replacements, this.#replacementRate, nowMs));
    this.#replacements = bucket;
    return ok;
  }

  #leastRecentlyUsed(): PooledModel | undefined {
    return this.#resident.keys().next().value;
  }

  /** By name: a variant swapped in from the registry keeps the popularity of the one it replaces. */
  readonly #frequency = new RequestFrequency<string>(FREQUENCY_WINDOW);

  /** `model` answered a request: it is the most recently used, and asked for once more. */
  touch(model: PooledModel): void {
    this.#frequency.count(model.name);
    // Deleted and set again, the model moves to the end of the map's order: the first key is the least recently used.
    if (this.#resident.has(model)) this.#setResident(model);
  }

  /** Whether `model` would fit now without evicting anything (readiness loads only those). */
  fitsWithoutEviction(model: PooledModel): boolean {
    return this.#resident.has(model) || this.usedBytes() + model.bytes <= this.budgetBytes;
  }

  usedBytes(): number {
    return this.#reserved + this.#residentBytes + this.#releasingBytes;
  }

  /**
   * Create `model`'s session with `make`, within the budget: room is made first by evicting the least recently
   * used others (released before `make` runs), then it is resident. One creation at a time per isolate: creating
   * a session is CPU on the isolate's one thread anyway, and each creation then sees the room the one before it
   * left. Throws, with why, when there cannot be room (a session larger than the whole budget).
   */
  create<T>(model: PooledModel, make: () => Promise<T>): Promise<T> {
    const created = this.#creations.then(() => this.#createNow(model, make));
    this.#creations = created.then(
      () => undefined,
      () => undefined,
    );
    return created;
  }

  #creations: Promise<void> = Promise.resolve();

  async #createNow<T>(model: PooledModel, make: () => Promise<T>): Promise<T> {
    const candidates: EvictionCandidate[] = [];
    for (const [other, lastUsed] of this.#resident) {
      if (other !== model) candidates.push({ name: other.name, bytes: other.bytes, lastUsed });
    }
    const room = makeRoom(model.bytes, this.usedBytes(), this.budgetBytes, candidates, "sessions being released");
    if (!room.fits) throw new Error(`${model.name}: no room within EDGE_SESSION_MEMORY_MB: ${room.reason}`);
    const victims = [...this.#resident.keys()].filter((m) => room.evict.includes(m.name));
    const why = `room for ${model.name} (${(model.bytes / 2 ** 20).toFixed(2)} MB) within EDGE_SESSION_MEMORY_MB`;
    for (const victim of victims) {
      this.#startRelease(victim);
      this.#evictions++;
      console.log(
        JSON.stringify({ msg: "edge session evicted", model: victim.name, reason: `least recently used; ${why}` }),
      );
    }
    await Promise.all(victims.map((victim) => victim.evict().finally(() => this.#released(victim))));
    this.#reserved += model.bytes;
    try {
      const value = await make();
      this.#created++;
      this.#setResident(model);
      return value;
    } finally {
      this.#reserved -= model.bytes;
    }
  }

  /**
   * `model` is replaced (a variant from the registry swapped in): its session is released, counted until then,
   * and forgotten; not an eviction. Nothing when it has no session. (One still being created when it is
   * replaced becomes resident and is never used again: it is soon the least recently used, evicted first.)
   */
  async retire(model: PooledModel): Promise<void> {
    if (!this.#startRelease(model)) return;
    try {
      await model.evict();
    } finally {
      this.#released(model);
    }
  }

  /**
   * `model` is the most recently used resident: deleted and set again, it moves to the end of the map's order, so
   * the first key is always the least recently used, found without a scan on a request's path.
   */
  #setResident(model: PooledModel): void {
    if (this.#resident.delete(model)) this.#residentBytes -= model.bytes;
    this.#resident.set(model, ++this.#tick);
    this.#residentBytes += model.bytes;
  }

  /** Resident to releasing (still counted until `#released`); false when `model` was not resident. */
  #startRelease(model: PooledModel): boolean {
    if (!this.#resident.delete(model)) return false;
    this.#residentBytes -= model.bytes;
    this.#releasing.add(model);
    this.#releasingBytes += model.bytes;
    return true;
  }

  #released(model: PooledModel): void {
    if (this.#releasing.delete(model)) this.#releasingBytes -= model.bytes;
  }

  snapshot(): SessionsView {
    return {
      budgetBytes: this.budgetBytes,
      residentBytes: this.usedBytes(),
      resident: this.#resident.size,
      created: this.#created,
      evictions: this.#evictions,
      deferred: this.#deferred,
      onRequestPath: this.#onRequestPath,
    };
  }
}
