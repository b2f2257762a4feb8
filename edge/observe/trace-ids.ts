/**
 * Ids for the traces an isolate starts: a random 64-bit prefix per isolate, then a counter, so that a request
 * pays a counter and two hex conversions rather than 24 random bytes. Trace ids must be unique, not secret
 * (W3C Trace Context); the prefix keeps isolates' ids apart, the counter a trace's.
 */
export class TraceIds {
  readonly #prefix: string;
  readonly #spanPrefix: string;
  #next: number;

  constructor(random: (bytes: number) => Uint8Array = (n) => crypto.getRandomValues(new Uint8Array(n))) {
    const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    this.#prefix = hex(random(8));
    this.#spanPrefix = hex(random(4));
    // A random start, so that an isolate's first trace ids are not 1, 2, 3 in every isolate.
    const start = random(4);
    this.#next = ((start[0]! << 16) | (start[1]! << 8) | start[2]!) + 1;
  }

  /** A new trace id and the span id of the Worker's part in it. */
  next(): { traceId: string; spanId: string } {
    const n = this.#next++;
    const counter = n.toString(16).padStart(16, "0");
    return { traceId: `${this.#prefix}${counter}`, spanId: `${this.#spanPrefix}${counter.slice(8)}` };
  }
}
