/**
 * The one Server-Timing format of both tiers (W3C Server Timing): entries `name;dur=<ms>;desc="<text>"`,
 * durations in ms with three decimals (µs), entries joined by `, `. The pools write three entries per answer
 * and the edge a few, so the writer is built for speed: durations from integers, quoting only when needed.
 */

/** Between two entries of one header value. */
export const TIMING_SEPARATOR = ", ";

/**
 * A duration in ms written with three decimals, as `ms.toFixed(3)` writes it (finite, non-negative, under
 * 2^31 µs), rounded to the µs. Built from two integers: V8 formats an integer several times faster than
 * `toFixed` formats a double.
 */
export function timingMs(ms: number): string {
  const us = Math.round(ms * 1000);
  const whole = Math.floor(us / 1000);
  const fraction = us - whole * 1000;
  return `${whole}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`;
}

/** `desc`'s quoted-string: a backslash before `"` and `\` (RFC 9110 §5.6.4); most descriptions have neither. */
const quoted = (text: string) => (text.includes('"') || text.includes("\\") ? text.replace(/[\\"]/g, "\\$&") : text);

/** One entry: `name`, then `;dur=` when a duration is given, then `;desc="…"` when a description is. */
export function timingEntry(name: string, ms?: number, desc?: string): string {
  let entry = name;
  if (ms !== undefined) entry += `;dur=${timingMs(ms)}`;
  if (desc !== undefined) entry += `;desc="${quoted(desc)}"`;
  return entry;
}
