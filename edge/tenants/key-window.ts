import type { KeyRateLimit } from "./keys.ts";

/**
 * A key's own rate limit as a fixed window: at most `requests` per `periodS` seconds, counted from the
 * window's first request. Kept per isolate (a Worker has no shared memory; Cloudflare runs several isolates
 * per location), so a tenant may get up to that many per isolate; the RATE_LIMITER binding is the
 * location-wide cap per client.
 */
export class KeyWindow {
  readonly #limit: KeyRateLimit;
  #startedAt = Number.NEGATIVE_INFINITY;
  #count = 0;

  constructor(limit: KeyRateLimit) {
    this.#limit = limit;
  }

  /** Count one request at `nowMs`; refused with the seconds until the window ends when it is full. */
  take(nowMs: number): { ok: true } | { ok: false; retryAfterS: number } {
    const periodMs = this.#limit.periodS * 1000;
    if (nowMs - this.#startedAt >= periodMs) {
      this.#startedAt = nowMs;
      this.#count = 0;
    }
    if (this.#count >= this.#limit.requests) {
      return { ok: false, retryAfterS: Math.max(1, Math.ceil((this.#startedAt + periodMs - nowMs) / 1000)) };
    }
    this.#count++;
    return { ok: true };
  }
}
