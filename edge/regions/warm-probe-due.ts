/**
 * When an isolate sends a warm probe to a region (edge/probe/warm-probe.ts does the sending): the region's
 * estimate just kept a request from it (skipped as too far) or proved wrong (a call cut off by the deadline),
 * and no probe of this isolate went to it within `intervalMs` or is still out. So a wrong "too far" is
 * corrected at most `intervalMs` after traffic needs the region, and a region that is really far costs at most
 * one probe (two GETs) per `intervalMs` per isolate. Pure.
 */
export function warmProbeDue(state: { sentAt?: number; inFlight: boolean }, now: number, intervalMs: number): boolean {
  return !state.inFlight && (state.sentAt === undefined || now - state.sentAt >= intervalMs);
}
