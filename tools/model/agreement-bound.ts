/**
 * How much agreement a count of agreeing rows proves: the one-sided Clopper–Pearson lower bound of a binomial
 * proportion, and how many rows a target would need. Pure.
 */

/** log P(D <= d) for D ~ Binomial(n, q), summed in log space (no underflow at large n). */
function logBinomialCdf(d: number, n: number, q: number): number {
  if (q <= 0) return 0;
  if (q >= 1) return d >= n ? 0 : Number.NEGATIVE_INFINITY;
  let logTerm = n * Math.log1p(-q); // k = 0
  let total = logTerm;
  const ratio = Math.log(q) - Math.log1p(-q);
  for (let k = 0; k < d; k++) {
    logTerm += Math.log(n - k) - Math.log(k + 1) + ratio;
    const hi = Math.max(total, logTerm);
    total = hi + Math.log(Math.exp(total - hi) + Math.exp(logTerm - hi));
  }
  return total;
}

/**
 * The one-sided Clopper–Pearson lower bound of a proportion at `confidence`: with `successes` of `n` rows agreeing,
 * the true agreement is at least this with that confidence. The `p` at which seeing `successes` or more has
 * probability `1 - confidence` (for all `n`: `(1 - confidence)^(1/n)`; for none: 0). Found by bisection to 1e-12.
 */
export function agreementLowerBound(successes: number, n: number, confidence = 0.95): number {
  if (!Number.isInteger(successes) || !Number.isInteger(n) || successes < 0 || successes > n) {
    throw new RangeError(`agreementLowerBound: ${successes} of ${n} rows`);
  }
  if (n === 0 || successes === 0) return 0;
  const alpha = 1 - confidence;
  if (successes === n) return alpha ** (1 / n);
  const failures = n - successes;
  const logAlpha = Math.log(alpha);
  // P(X >= successes | p) = P(failures observed or fewer | q = 1 - p) rises with p.
  let lo = 0;
  let hi = successes / n;
  for (let i = 0; i < 60 && hi - lo > 1e-12; i++) {
    const p = (lo + hi) / 2;
    if (logBinomialCdf(failures, n, 1 - p) < logAlpha) lo = p;
    else hi = p;
  }
  return lo;
}

/**
 * The fewest rows that, disagreeing at `disagreementRate` (rounded up to whole rows), prove `target` at
 * `confidence` (agreementLowerBound >= target); undefined when no number can (the rate itself misses the target).
 * With no disagreement: `ceil(log(1 - confidence) / log(target))`, 59 rows for 0.95, 299 for 0.99, 598 for 0.995.
 */
export function rowsToProve(target: number, disagreementRate: number, confidence = 0.95): number | undefined {
  if (!(target > 0 && target < 1) || 1 - disagreementRate <= target) return undefined;
  const proves = (n: number) => {
    const failures = Math.ceil(disagreementRate * n - 1e-9);
    return agreementLowerBound(n - failures, n, confidence) >= target;
  };
  let lo = Math.max(1, Math.floor(Math.log(1 - confidence) / Math.log(target)) - 1);
  if (proves(lo)) return lo;
  let hi = lo * 2;
  while (!proves(hi)) {
    if (hi > 1e8) return undefined;
    lo = hi;
    hi *= 2;
  }
  // Between lo (fails) and hi (proves): the first n that proves, near enough for a count of rows to ask for.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (proves(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
