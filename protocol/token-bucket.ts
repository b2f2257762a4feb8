/**
 * The one token bucket of both tiers, pure: plain data in and out, time passed in. It fills with time at a rate
 * (`refill`: a guaranteed tenant's reservation of rows, the audit's cap, the edge's session replacements) or by
 * events (`earn`: the hedge budget, a fraction of a token per forwarded request), holds at most `burst`, and a
 * taker gets what it asks only while the tokens cover it (`take`). Over any span, what is taken is at most the
 * burst plus what filled in.
 */
export interface TokenBucket {
  /** Tokens available now (at `at`). */
  tokens: number;
  /** When `tokens` was last brought up to date, on the caller's clock (ms unless `unitsPerS` says otherwise). */
  at: number;
}

export interface FillRate {
  /** Tokens per second. */
  perS: number;
  /** Tokens the bucket holds at most. */
  burst: number;
  /** Units of the caller's clock per second: 1000 for ms (the default), 1e6 for µs. */
  unitsPerS?: number;
}

/** A bucket that starts full at `now`. */
export function fullBucket(burst: number, now: number): TokenBucket {
  return { tokens: burst, at: now };
}

/**
 * The bucket brought up to `now` (unchanged for a `now` not after its own). A bucket never brought up to date
 * (`at` of -Infinity) is full: a holder that has no clock when it is made starts one so.
 */
export function refill(bucket: TokenBucket, rate: FillRate, now: number): TokenBucket {
  if (now <= bucket.at) return bucket;
  if (bucket.at === Number.NEGATIVE_INFINITY) return fullBucket(rate.burst, now);
  const filled = ((now - bucket.at) * rate.perS) / (rate.unitsPerS ?? 1000);
  return { tokens: Math.min(rate.burst, bucket.tokens + filled), at: now };
}

/** `tokens` more, up to `burst`, whatever the time (a bucket filled by events). */
export function earn(bucket: TokenBucket, tokens: number, burst: number): TokenBucket {
  return { tokens: Math.min(burst, bucket.tokens + tokens), at: bucket.at };
}

/** Take `n` tokens if the bucket (already refilled) covers them: the bucket after, and whether they were taken. */
export function take(bucket: TokenBucket, n = 1): { ok: boolean; bucket: TokenBucket } {
  if (bucket.tokens < n) return { ok: false, bucket };
  return { ok: true, bucket: { tokens: bucket.tokens - n, at: bucket.at } };
}
