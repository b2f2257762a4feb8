import { type FillRate, refill, type TokenBucket, take } from "../../protocol/token-bucket.ts";

/**
 * Which edge answers the live audit re-asks of a region (docs/observability.md): each with probability
 * AUDIT_SHARE, and no more than AUDIT_MAX_PER_SECOND per isolate (a token bucket of one second's worth,
 * protocol/token-bucket.ts), so a burst of edge answers never turns into a burst of region calls. Pure: the
 * caller gives the time and the draw.
 */
export class AuditSampler {
  readonly #share: number;
  readonly #rate: FillRate;
  /** Full at the first answer drawn. */
  #bucket: TokenBucket = { tokens: 0, at: Number.NEGATIVE_INFINITY };

  constructor(share: number, perSecond: number) {
    this.#share = share;
    this.#rate = { perS: perSecond, burst: perSecond };
  }

  /** Whether to audit an answer given at `nowMs`; `draw` is uniform in [0, 1). */
  take(nowMs: number, draw: number): boolean {
    if (!(draw < this.#share)) return false;
    const { ok, bucket } = take(refill(this.#bucket, this.#rate, nowMs));
    this.#bucket = bucket;
    return ok;
  }
}
