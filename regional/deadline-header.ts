import { BadRequest } from "../protocol/errors.ts";
import { DEADLINE_HEADER } from "../protocol/headers.ts";

/** Longest budget a caller may give: an hour is far past any client's patience, so more is a mistake. */
const MAX_DEADLINE_MS = 3_600_000;

/**
 * The absolute deadline, in microseconds on `receivedUs`'s clock, from the deadline header's remaining
 * milliseconds (counted from when the pool received the request); `Infinity` without the header.
 * 400 for anything but a non-negative decimal number of milliseconds up to an hour.
 */
export function deadlineFromHeader(value: string | undefined, receivedUs: number): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  const ms = /^\d{1,7}(\.\d{1,6})?$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(ms <= MAX_DEADLINE_MS)) {
    throw new BadRequest(
      `${DEADLINE_HEADER} must be the milliseconds left to answer, from 0 to ${MAX_DEADLINE_MS}, got "${value}"`,
    );
  }
  return receivedUs + ms * 1000;
}
