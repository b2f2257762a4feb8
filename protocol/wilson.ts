/**
 * Wilson score interval of a binomial proportion: where the true share lies, given `successes` of `trials`,
 * at the confidence `z` stands for. Unlike the normal approximation it stays inside [0, 1] and is honest at
 * shares near 0 or 1 and at small samples, which is where an agreement of 99% on a few hundred rows sits.
 * The audit's alert computes the same bounds in PromQL (deploy/prometheus/cascade.rules.yml).
 */

/** Two-sided 95%: the z the audit's figures and alert use. */
export const Z_95 = 1.959964;

export interface WilsonInterval {
  /** successes / trials (NaN without trials). */
  share: number;
  lower: number;
  upper: number;
}

/** The interval of `successes` out of `trials`; without trials, the whole of [0, 1]. */
export function wilson(successes: number, trials: number, z = Z_95): WilsonInterval {
  if (!(trials > 0)) return { share: Number.NaN, lower: 0, upper: 1 };
  if (successes < 0 || successes > trials) throw new RangeError(`${successes} successes of ${trials} trials`);
  const p = successes / trials;
  const z2 = z * z;
  const centre = p + z2 / (2 * trials);
  const spread = z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  const scale = 1 + z2 / trials;
  // Clamped: at p = 0 or 1 the formula gives the bound exactly, up to rounding.
  return { share: p, lower: Math.max(0, (centre - spread) / scale), upper: Math.min(1, (centre + spread) / scale) };
}
