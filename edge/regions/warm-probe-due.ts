/**
 * When an isolate sends a warm probe to a region (edge/forward/warm-probe.ts does the sending): the region's
 * estimate just kept a request from it (skipped as too far) or proved wrong (a call cut off by the deadline),
 * and no probe of this isolate went to it within `intervalMs` or is still out. So a wrong "too far" is
 * corrected at most `intervalMs` after traffic needs the region, and a region that is really far costs at most
 * one probe (a GET and a one-row classify) per `intervalMs` per isolate. A probe still out after `lostAfterMs`
 * counts as lost (its calls time out well before; a probe whose `waitUntil` was cut short never reports), so
 * that one lost probe cannot stop the region from ever being probed again. Pure.
 */
export function warmProbeDue(
  state: { sentAt?: number; inFlight: boolean },
  now: number,
  intervalMs: number,
  lostAfterMs: number,
): boolean {
  if (state.sentAt === undefined) return true;
  const since = now - state.sentAt;
  return state.inFlight ? since >= lostAfterMs : since >= intervalMs;
}
