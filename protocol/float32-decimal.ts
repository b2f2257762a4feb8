/**
 * 10^k for k in 0..22: the powers of ten a double holds exactly (5^22 < 2^53). One multiplication or division
 * by one of them is correctly rounded, so `D * 10^k` (or `D / 10^-k`) with an integer D < 2^53 is the double
 * `Number("DeK")` reads: Clinger's fast path, which lets the round trip be checked without any string.
 */
const EXACT_POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
const EXACT = 22;
/** 10^k for k in -MAX_EXPONENT..MAX_EXPONENT, each the nearest double (beyond ±22 not exact). */
const MAX_EXPONENT = 60;
const POW10 = Array.from({ length: 2 * MAX_EXPONENT + 1 }, (_, i) => Number(`1e${i - MAX_EXPONENT}`));
/** A relative margin of 4 ulps: the error of `D * 10^k` with an inexact 10^k is at most about 1. */
const MARGIN = 2 ** -50;

const bits = new Uint32Array(1);
const float = new Float32Array(bits.buffer);

/** The double `Number("DeK")` reads, in [-22, 22] without any string. */
function scaled(digits: number, k: number): number {
  if (k >= 0 && k <= EXACT) return digits * EXACT_POW10[k]!;
  if (k < 0 && k >= -EXACT) return digits / EXACT_POW10[-k]!;
  return Number(`${digits}e${k}`);
}

/** Whether `D × 10^k` reads back as the float32 `a`, as `Math.fround(Number("DeK"))` decides. */
function readsBack(digits: number, k: number, a: number): boolean {
  if (k >= -EXACT && k <= EXACT)
    return Math.fround(k >= 0 ? digits * EXACT_POW10[k]! : digits / EXACT_POW10[-k]!) === a;
  // Beyond Clinger's range the product is within a few ulps of what the parser reads; only a value that close
  // to a float32 rounding boundary needs the parse itself.
  const near = digits * POW10[k + MAX_EXPONENT]!;
  const low = Math.fround(near * (1 - MARGIN));
  if (low === Math.fround(near * (1 + MARGIN))) return low === a;
  return Math.fround(Number(`${digits}e${k}`)) === a;
}

/**
 * How far from a rounding boundary, in units of the candidate's last digit, the quick test of `inside` is
 * trusted: its quotient `q` carries an error of a few ulps of a number below 1e10 (under 1e-6), and a decimal
 * that close to a boundary may also be moved across it by the parse's own rounding to a double.
 */
const TOLERANCE = 1e-5;

/**
 * Whether the candidate `digits × 10^k`, `distance` units of 10^k from the value, lies within `half` units of
 * it (the rounding interval's half width on its side): decided by the numbers when clearly in or out, by
 * `readsBack` (exact) when within `TOLERANCE` of the boundary.
 */
function inside(distance: number, half: number, digits: number, k: number, a: number): boolean {
  if (distance < half - TOLERANCE) return true;
  if (distance > half + TOLERANCE) return false;
  return readsBack(digits, k, a);
}

/** The float32 `a`'s rounding interval: its half widths below and above `a` (they differ at a power of two). */
const interval = { below: 0, above: 0 };

/**
 * The digits D (an integer) of the multiple of 10^k nearest `a` that reads back to `a` as a float32, 0 when
 * neither multiple of 10^k around it does. If any multiple of 10^k reads back, the nearest one on its side of
 * `a` does too (a float32 reads back from one interval around it), so these two are the only candidates; the
 * nearer one is tried first and wins when both read back (the even one on a tie).
 */
function digitsAt(a: number, k: number): number {
  const perUnit = POW10[MAX_EXPONENT - k]!;
  const q = a * perUnit;
  const below = Math.floor(q);
  const fromBelow = q - below;
  const halfBelow = interval.below * perUnit;
  const halfAbove = interval.above * perUnit;
  if (fromBelow < 0.5 || (fromBelow === 0.5 && below % 2 === 0)) {
    if (below > 0 && inside(fromBelow, halfBelow, below, k, a)) return below;
    return inside(1 - fromBelow, halfAbove, below + 1, k, a) ? below + 1 : 0;
  }
  if (inside(1 - fromBelow, halfAbove, below + 1, k, a)) return below + 1;
  return below > 0 && inside(fromBelow, halfBelow, below, k, a) ? below : 0;
}

/** log10(2), for the decimal exponent of a power of two. */
const LOG10_2 = 0.3010299956639812;

/** The largest float32, whose rounding interval above is as wide as below (what lies beyond reads as Infinity). */
const MAX_FLOAT32_BITS = 0x7f7fffff;

/**
 * Sets `interval` for the float32 `a` (positive, finite) and returns a decimal exponent k such that 10^k is at
 * most half its ulp: at that length some multiple of 10^k reads back to `a` (its rounding interval is at
 * least 3/4 ulp wide), so the search need not go finer.
 */
function prepare(a: number): number {
  float[0] = a;
  const pattern = bits[0]!;
  bits[0] = pattern - 1;
  interval.below = (a - float[0]!) / 2;
  if (pattern === MAX_FLOAT32_BITS) {
    interval.above = interval.below;
  } else {
    bits[0] = pattern + 1;
    interval.above = (float[0]! - a) / 2;
  }
  const biased = pattern >>> 23;
  // The ulp is 2^(biased - 150) for normal floats, 2^-149 for subnormals.
  const ulpExponent = biased > 0 ? biased - 150 : -149;
  return Math.floor((ulpExponent - 1) * LOG10_2);
}

/**
 * Of the decimals that read back to the float32 `a` (positive, finite), the one with the fewest significant
 * digits, the closest to `a` among those (the even one on a tie), as the double that text reads as.
 *
 * How: whether some multiple of 10^k reads back is monotone in k (a multiple of 10^k is one of 10^(k-1)).
 * Starting one above the finest length (`prepare`), where one always does, the search climbs while one still
 * does (`digitsAt`). Most float32 values need 7 to 9 digits, which is the finest length or the one above it:
 * two or three levels, each a few multiplications; an exact check (`readsBack`) only for a candidate within
 * `TOLERANCE` of the rounding interval's edge.
 */
function shortestDecimal(a: number): number {
  let k = prepare(a) + 1;
  let digits = digitsAt(a, k);
  if (digits === 0) {
    k--;
    digits = digitsAt(a, k);
  } else {
    for (let up = digitsAt(a, k + 1); up > 0; up = digitsAt(a, k + 1)) {
      digits = up;
      k++;
    }
  }
  // D × 10^k and (D / 10) × 10^(k+1) are the same exact value, read as the same double: trailing zeros in D
  // (the nearer multiple can be 10 × 10^k) need no stripping.
  return scaled(digits, k);
}

/**
 * The number to write for an FP32 value: of the decimals that read back to the same float32
 * (`Math.fround(Number(text)) === Math.fround(value)`), the one with the fewest significant digits, the
 * closest to the value among those (the even one on a tie). `JSON.stringify` and `String` then write it with
 * those digits and no more: `0.1` for `Math.fround(0.1)`, where the double itself prints as
 * `0.10000000149011612`. At most 9 significant digits (every float32 reads back from 9). NaN, ±Infinity and
 * ±0 are returned as they are.
 */
export function shortestFloat32(value: number): number {
  const v = Math.fround(value);
  if (v === 0 || !Number.isFinite(v)) return v;
  const out = shortestDecimal(v < 0 ? -v : v);
  return v < 0 ? -out : out;
}
