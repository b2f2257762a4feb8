/**
 * A region's circuit breaker, after Envoy's outlier detection: `failures` consecutive failures or timeouts
 * open it (eject the region); after a cool-down one real request goes through as a half-open trial call; its
 * success closes the breaker, its failure opens it again for longer. Transitions are pure: state in,
 * state out; the caller keeps the state.
 */
export type RegionBreaker =
  | { state: "closed"; failures: number; ejections: number }
  | { state: "open"; until: number; ejections: number }
  | { state: "half-open"; trialInFlight: boolean; ejections: number };

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. Default 5 (Envoy's consecutive_5xx). */
  failures: number;
  /** Cool-down after the first ejection, in ms; the n-th consecutive ejection waits n times as long. Default 30000. */
  cooldownMs: number;
  /** Longest cool-down, in ms. Default 300000. */
  maxCooldownMs: number;
}

/** `neutral`: the call says nothing about the region (cancelled by a hedge, or never sent). */
export type CallOutcome = "success" | "failure" | "neutral";

export const CLOSED: RegionBreaker = { state: "closed", failures: 0, ejections: 0 };

function open(ejections: number, now: number, options: BreakerOptions): RegionBreaker {
  const cooldown = Math.min(options.cooldownMs * ejections, options.maxCooldownMs);
  return { state: "open", until: now + cooldown, ejections };
}

/** Whether a call would be admitted at `now`, without changing anything (for ordering and status). */
export function breakerAllows(breaker: RegionBreaker, now: number): boolean {
  if (breaker.state === "closed") return true;
  if (breaker.state === "open") return now >= breaker.until;
  return !breaker.trialInFlight;
}

/** Admit a call or not. Admitting after the cool-down turns the breaker half-open with this call as its trial. */
export function breakerAdmit(breaker: RegionBreaker, now: number): { admit: boolean; breaker: RegionBreaker } {
  if (breaker.state === "closed") return { admit: true, breaker };
  if (!breakerAllows(breaker, now)) return { admit: false, breaker };
  return { admit: true, breaker: { state: "half-open", trialInFlight: true, ejections: breaker.ejections } };
}

/**
 * Record how an admitted call ended. A neutral outcome (the loser of a hedge, a call never sent) says
 * nothing about the region: it neither counts as a failure nor resets the count, and a neutral trial call
 * frees the slot.
 */
export function breakerRecord(
  breaker: RegionBreaker,
  outcome: CallOutcome,
  now: number,
  options: BreakerOptions,
): RegionBreaker {
  switch (breaker.state) {
    case "closed":
      if (outcome === "success") return breaker.failures === 0 ? breaker : { ...breaker, failures: 0 };
      if (outcome === "neutral") return breaker;
      return breaker.failures + 1 >= options.failures
        ? open(breaker.ejections + 1, now, options)
        : { ...breaker, failures: breaker.failures + 1 };
    case "half-open":
      if (outcome === "success") return CLOSED;
      if (outcome === "neutral") return { ...breaker, trialInFlight: false };
      return open(breaker.ejections + 1, now, options);
    case "open":
      // A call admitted before the breaker opened, ending late: the ejection stands.
      return breaker;
  }
}
