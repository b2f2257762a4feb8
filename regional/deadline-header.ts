import { DEADLINE_HEADER } from "../protocol/headers.ts";
import { msHeader } from "../protocol/ms-header.ts";

/** Longest budget a caller may give: an hour is far past any client's patience, so more is a mistake. */
const MAX_DEADLINE_MS = 3_600_000;

/**
 * The deadline header's milliseconds left (counted from when the pool received the request); `undefined`
 * without the header. 400 for anything but whole milliseconds from 0 to an hour (protocol/ms-header.ts), read
 * before admission so that a malformed header is a 400 whatever the load.
 */
export function deadlineMs(value: string | undefined): number | undefined {
  return msHeader(DEADLINE_HEADER, value, { min: 0, max: MAX_DEADLINE_MS });
}

/** The absolute deadline, in microseconds on `receivedUs`'s clock; `Infinity` without one. */
export function deadlineAt(ms: number | undefined, receivedUs: number): number {
  return ms === undefined ? Number.POSITIVE_INFINITY : receivedUs + ms * 1000;
}
