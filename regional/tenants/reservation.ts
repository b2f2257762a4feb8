/**
 * A guaranteed tenant's reservation as a token bucket of rows (protocol/token-bucket.ts, on the `nowUs` clock): it
 * fills at the reserved rows per second up to `burstRows`, and a call whose rows it covers runs within the
 * reservation (ahead of best-effort work). A call it does not cover takes nothing and runs as best-effort: the
 * tenant's excess competes for what reservations leave. Pure.
 */

/** How long a reservation may be saved up for a burst, in seconds of its rate. */
export const BURST_S = 0.25;

/**
 * Rows a bucket holds at most: a quarter second of the reservation, and never less than one full request
 * (`maxRequestRows`), so that the largest call a client may send can run within any reservation.
 */
export function burstRows(reservedRowsPerS: number, maxRequestRows: number): number {
  return Math.max(reservedRowsPerS * BURST_S, maxRequestRows);
}
