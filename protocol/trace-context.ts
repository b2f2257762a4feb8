/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate` headers, read
 * and written. The edge continues a client's trace or starts one and forwards it to the regions; the pools read
 * it with OpenTelemetry's own propagator (regional/tracing/), the tests and the edge with this.
 */

/** A span's identity as `traceparent` carries it. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero: the caller's span. */
  parentId: string;
  /** The trace-flags byte; bit 0 is `sampled`. */
  flags: number;
}

const SAMPLED = 0x01;
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: the same first four fields, then anything after a dash (the spec's forward compatibility). */
const LATER_VERSION = /^([0-9a-e][0-9a-f]|f[0-9a-e])-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * A `traceparent` header, read as the spec says a receiver must: version `00` exactly as written; a later
 * version (not `ff`) by its first four fields; all-zero ids, upper-case hex or any other shape are invalid
 * (undefined), and the receiver then starts a trace of its own.
 */
export function parseTraceParent(header: string | null | undefined): TraceParent | undefined {
  if (!header) return undefined;
  const value = header.trim();
  let traceId: string;
  let parentId: string;
  let flags: string;
  const v00 = VERSION_00.exec(value);
  if (v00) {
    [, traceId, parentId, flags] = v00 as unknown as [string, string, string, string];
  } else {
    const later = value.startsWith("00-") ? null : LATER_VERSION.exec(value);
    if (!later) return undefined;
    [, , traceId, parentId, flags] = later as unknown as [string, string, string, string, string];
  }
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, flags: Number.parseInt(flags, 16) };
}

/** Whether the caller recorded its span (the `sampled` flag). */
export const isSampled = (parent: Pick<TraceParent, "flags">): boolean => (parent.flags & SAMPLED) === SAMPLED;

/** The flags byte with `sampled` set or cleared, the other bits kept. */
export const withSampled = (flags: number, sampled: boolean): number => (sampled ? flags | SAMPLED : flags & ~SAMPLED);

/** A version-00 `traceparent` header. */
export function formatTraceParent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.parentId}-${(parent.flags & 0xff).toString(16).padStart(2, "0")}`;
}

/** At most 32 list members (the spec); a vendor key, `=`, a value of printable ASCII without `,` or `=`. */
const MEMBER = /^[a-z0-9][a-z0-9_\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_MEMBERS = 32;
const MAX_LENGTH = 512;

/**
 * A `tracestate` header passed on as it came when it is well formed (at most 32 members of `key=value`, 512
 * characters, no duplicate keys); undefined otherwise: the spec lets a receiver drop a state it cannot parse,
 * and a proxy must not pass on one it has not checked.
 */
export function checkTraceState(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (value === "" || value.length > MAX_LENGTH) return undefined;
  const members = value
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "");
  if (members.length === 0 || members.length > MAX_MEMBERS) return undefined;
  const keys = new Set<string>();
  for (const member of members) {
    if (!MEMBER.test(member)) return undefined;
    const key = member.slice(0, member.indexOf("="));
    if (keys.has(key)) return undefined;
    keys.add(key);
  }
  return members.join(",");
}
