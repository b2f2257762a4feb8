/**
 * Which edge answers the live audit re-asks of a region (docs/observability.md): each with probability
 * AUDIT_SHARE, and no more than AUDIT_MAX_PER_SECOND per isolate (a token bucket of one second's worth), so a
 * burst of edge answers never turns into a burst of region calls. Pure: the caller gives the time and the draw.
 */
export class AuditSampler {
  readonly #share: number;
  readonly #perSecond: number;
  #tokens: number;
  #at = Number.NEGATIVE_INFINITY;

  constructor(share: number, perSecond: number) {
    this.#share = share;
    this.#perSecond = perSecond;
    this.#tokens = perSecond;
  }

  /** Whether to audit an answer given at `nowMs`; `draw` is uniform in [0, 1). */
  take(nowMs: number, draw: number): boolean {
    if (!(draw < this.#share)) return false;
    if (this.#at !== Number.NEGATIVE_INFINITY) {
      this.#tokens = Math.min(this.#perSecond, this.#tokens + ((nowMs - this.#at) / 1000) * this.#perSecond);
    }
    this.#at = nowMs;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
