/**
 * One direction of a network path with latency, as a pure queue: each chunk leaves no earlier than its arrival
 * plus the one-way delay (plus jitter), and never before the chunk ahead of it, so the bytes keep their order
 * (a pipe with latency, not a sleep per connection). The caller owns the clock and the sockets: it pushes what
 * arrives, asks when the next chunk is due, and sends what `take` returns.
 */

export interface DelaySettings {
  /** One-way delay, in ms. */
  delayMs: number;
  /** Each chunk's delay varies uniformly within ±jitterMs (never below 0, never reordering), in ms. */
  jitterMs: number;
}

/**
 * When a chunk arriving at `arrivedAt` may leave: arrival + delay + jitter (`u` uniform in [0, 1) picks the jitter),
 * but not before `previousRelease`, the release time of the chunk ahead of it. Lowering the delay mid-run
 * therefore never lets a later chunk overtake an earlier one.
 */
export function releaseTime(arrivedAt: number, previousRelease: number, settings: DelaySettings, u: number): number {
  const jitter = settings.jitterMs * (2 * u - 1);
  return Math.max(previousRelease, arrivedAt + Math.max(0, settings.delayMs + jitter));
}

/** Checks settings once, naming the field. */
export function checkDelaySettings(settings: DelaySettings): DelaySettings {
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0, got ${value}`);
  }
  return settings;
}

/** The queue of one direction. `T` is whatever the caller sends (a Buffer, or a marker for the end of stream). */
export class DelayLine<T> {
  readonly #queue: { item: T; at: number; bytes: number }[] = [];
  #lastRelease = Number.NEGATIVE_INFINITY;
  #bytes = 0;

  /** Queue `item` (of `bytes` bytes) arriving at `now`; returns when it will be due. */
  push(item: T, bytes: number, now: number, settings: DelaySettings, u: number): number {
    const at = releaseTime(now, this.#lastRelease, settings, u);
    this.#lastRelease = at;
    this.#queue.push({ item, at, bytes });
    this.#bytes += bytes;
    return at;
  }

  /** Every item due at `now`, in order. */
  take(now: number): T[] {
    const out: T[] = [];
    while (this.#queue.length > 0 && this.#queue[0]!.at <= now) {
      const head = this.#queue.shift()!;
      this.#bytes -= head.bytes;
      out.push(head.item);
    }
    return out;
  }

  /** When the next item is due; undefined when the line is empty. */
  nextAt(): number | undefined {
    return this.#queue[0]?.at;
  }

  /** Bytes queued and not yet due. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Drop everything queued (a partition loses what was in flight). */
  clear(): void {
    this.#queue.length = 0;
    this.#bytes = 0;
  }
}
