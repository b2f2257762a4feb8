/**
 * Wald's sequential probability ratio test for a Bernoulli rate: H0 p = p0 against H1 p = p1 > p0, on the
 * count of events in a number of trials. The log likelihood ratio climbs with each event and falls with each
 * trial without one; crossing `reject` says H1 (roll back), crossing `accept` says H0 (the step passes).
 *
 * Under H0 the likelihood ratio is a martingale of mean 1, so by Ville's inequality the chance that it EVER
 * reaches e^reject is at most e^-reject = alpha / (1 - beta): looking at the sums as often as one likes (the
 * controller reads the pools every second, at any sample count) does not raise the false rollback rate.
 */

export interface WaldBounds {
  /** ln(beta / (1 - alpha)): at or below, H0 is accepted. */
  accept: number;
  /** ln((1 - beta) / alpha): at or above, H0 is rejected. */
  reject: number;
}

export function waldBounds(alpha: number, beta: number): WaldBounds {
  return { accept: Math.log(beta / (1 - alpha)), reject: Math.log((1 - beta) / alpha) };
}

/** ln L(p1) / L(p0) of `events` in `trials` Bernoulli trials. */
export function bernoulliLlr(events: number, trials: number, p0: number, p1: number): number {
  return events * Math.log(p1 / p0) + (trials - events) * Math.log((1 - p1) / (1 - p0));
}

export type Verdict = "reject" | "accept" | "continue";

/** The test's verdict; before `minSamples` trials it decides nothing either way. */
export function verdictOf(llr: number, trials: number, bounds: WaldBounds, minSamples: number): Verdict {
  if (trials < minSamples) return "continue";
  if (llr >= bounds.reject) return "reject";
  if (llr <= bounds.accept) return "accept";
  return "continue";
}

/**
 * Trials without an event an identical candidate needs to be accepted, and events in a row an offending one
 * needs to be rejected (the fastest either way), before `minSamples` applies: what `npm run rollout -- status`
 * and the docs quote.
 */
export function fastestDecisions(p0: number, p1: number, bounds: WaldBounds): { accept: number; reject: number } {
  return {
    accept: Math.ceil(bounds.accept / Math.log((1 - p1) / (1 - p0))),
    reject: Math.ceil(bounds.reject / Math.log(p1 / p0)),
  };
}
