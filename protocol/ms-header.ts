import { BadRequest } from "./errors.ts";

/**
 * A header of whole milliseconds (`x-edgecascade-deadline-ms`, `x-edgecascade-budget-ms`), read one way at
 * the edge and the pools: absent is `undefined`; present, it is decimal digits (surrounding spaces aside), as
 * HTTP writes its own durations (RFC 9110's `Retry-After`, `Age`), from `min` up to `max`, or a 400 naming the
 * header. At most 15 digits (31,000 years), so every value is an exact double. No sign, fraction, exponent, hex or empty value: each of those is a client's mistake, told as one
 * rather than guessed at.
 */
export function msHeader(
  name: string,
  value: string | null | undefined,
  range: { min: number; max?: number },
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const { min, max = Number.POSITIVE_INFINITY } = range;
  const text = value.trim();
  const ms = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms >= min && ms <= max)) {
    const bounds = max === Number.POSITIVE_INFINITY ? `${min} or more` : `from ${min} to ${max}`;
    throw new BadRequest(`${name} must be a whole number of milliseconds, ${bounds}, got ${JSON.stringify(value)}`);
  }
  return ms;
}
