/**
 * A guaranteed tenant's reservation as a token bucket of rows: it fills at the reserved rows per second up to
 * `burstRows`, and a call whose rows it covers runs within the reservation (ahead of best-effort work). A call
 * it does not cover takes nothing and runs as best-effort: the tenant's excess competes for what reservations
 * leave. Pure: the state is plain data and time is passed in.
 */
export interface ReservationBucket {
  /** Rows available now (at `atUs`). */
  tokens: number;
  /** When `tokens` was last brought up to date, µs on the `nowUs` clock. */
  atUs: number;
}

/** How long a reservation may be saved up for a burst, in seconds of its rate. */
export const BURST_S = 0.25;

/**
 * Rows a bucket holds at most: a quarter second of the reservation, and never less than one full request
 * (`maxRequestRows`), so that the largest call a client may send can run within any reservation.
 */
export function burstRows(reservedRowsPerS: number, maxRequestRows: number): number {
  return Math.max(reservedRowsPerS * BURST_S, maxRequestRows);
}

/** A bucket that starts full. */
export function fullBucket(burst: number, nowUs: number): ReservationBucket {
  return { tokens: burst, atUs: nowUs };
}

/** The bucket brought up to `nowUs`. */
export function refill(bucket: ReservationBucket, ratePerS: number, burst: number, nowUs: number): ReservationBucket {
  if (nowUs <= bucket.atUs) return bucket;
  return { tokens: Math.min(burst, bucket.tokens + ((nowUs - bucket.atUs) * ratePerS) / 1e6), atUs: nowUs };
}

/** Take `rows` if the bucket (already refilled) covers them: the bucket after, and whether they are reserved. */
export function take(bucket: ReservationBucket, rows: number): { bucket: ReservationBucket; reserved: boolean } {
  if (bucket.tokens < rows) return { bucket, reserved: false };
  return { bucket: { tokens: bucket.tokens - rows, atUs: bucket.atUs }, reserved: true };
}
