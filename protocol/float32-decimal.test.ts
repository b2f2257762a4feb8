import { describe, expect, it } from "vitest";
import { shortestFloat32 } from "./float32-decimal.ts";

const bits = new Uint32Array(1);
const asFloat = new Float32Array(bits.buffer);
/** The float32 with these bits, as a double. */
function float32(pattern: number): number {
  bits[0] = pattern >>> 0;
  return asFloat[0]!;
}

/** Significant digits of a number as JavaScript writes it ("1.5e-7" → 2, "0.0012" → 2, "120" → 2). */
function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, "").replace(/e.*$/, "").replace(".", "");
  return mantissa.replace(/^0+/, "").replace(/0+$/, "").length;
}

/**
 * Whether some decimal of `p` significant digits reads back to `v`, found independently of the code under
 * test: V8's correctly rounded `toExponential` gives the nearest p-digit decimal; with the next one on
 * either side it covers the nearest on each side of `v`, and if any p-digit decimal reads back, one of those
 * does (the float32's rounding interval is one interval around `v`).
 */
function somePDigitsReadBack(v: number, p: number): boolean {
  const [mantissa, exponent] = Math.abs(v)
    .toExponential(p - 1)
    .split("e");
  const digits = Number(mantissa!.replace(".", ""));
  const k = Number(exponent) - (p - 1);
  const sign = v < 0 ? "-" : "";
  return [digits - 1, digits, digits + 1].some((d) => d > 0 && Math.fround(Number(`${sign}${d}e${k}`)) === v);
}

/** The property: the text reads back to the same float32, with no more digits than it needs. */
function check(v: number): void {
  const text = JSON.stringify(shortestFloat32(v));
  const read = Math.fround(Number(text));
  if (!Object.is(read, v) && !(v === 0 && read === 0)) {
    throw new Error(`${v} was written ${text}, which reads back as ${read}`);
  }
  const n = significantDigits(text);
  if (n > 9) throw new Error(`${v} was written ${text}: ${n} digits`);
  for (let p = 1; p < n; p++) {
    if (somePDigitsReadBack(v, p)) throw new Error(`${v} was written ${text}, but ${p} digits would do`);
  }
}

/** A deterministic generator (xorshift32), so that a failure names a reproducible pattern. */
function* patterns(count: number, seed: number): Generator<number> {
  let x = seed;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    yield x >>> 0;
  }
}

describe("shortestFloat32", () => {
  it("writes the short decimal a float32 came from", () => {
    expect(JSON.stringify(Math.fround(0.1))).toBe("0.10000000149011612");
    expect(JSON.stringify(shortestFloat32(Math.fround(0.1)))).toBe("0.1");
    expect(JSON.stringify([0.7, 0.2, 1e-7, 0.123456789, 3.4e38].map(shortestFloat32))).toBe(
      "[0.7,0.2,1e-7,0.12345679,3.4e+38]",
    );
    expect(shortestFloat32(1)).toBe(1);
    expect(shortestFloat32(0.5)).toBe(0.5);
    expect(String(shortestFloat32(16777216))).toBe("16777216");
    expect(String(shortestFloat32(1e10))).toBe("10000000000");
    expect(String(shortestFloat32(1e11))).toBe("100000000000");
  });

  it.each([
    [17.99, 17.99],
    [Math.fround(17.99), 17.99],
    [0.003601, 0.003601],
    [16, 16],
  ])("%d -> %d (held-out fixtures keep the features as written)", (x, shortest) => {
    expect(shortestFloat32(x)).toBe(shortest);
  });

  it("keeps the values that have no digits", () => {
    expect(shortestFloat32(0)).toBe(0);
    expect(Object.is(shortestFloat32(-0), -0)).toBe(true);
    expect(shortestFloat32(Number.NaN)).toBeNaN();
    expect(shortestFloat32(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(shortestFloat32(Number.NEGATIVE_INFINITY)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("rounds a double to its float32 first", () => {
    // 0.1 and its float32 are different doubles with the same float32: one text for both.
    expect(shortestFloat32(0.1)).toBe(shortestFloat32(Math.fround(0.1)));
    expect(String(shortestFloat32(1 / 3))).toBe("0.33333334");
  });

  it("writes the extremes: subnormals, the least and largest floats, powers of two", () => {
    expect(String(shortestFloat32(float32(0x00000001)))).toBe("1e-45");
    expect(String(shortestFloat32(float32(0x007fffff)))).toBe("1.1754942e-38");
    expect(String(shortestFloat32(float32(0x00800000)))).toBe("1.1754944e-38");
    expect(String(shortestFloat32(float32(0x7f7fffff)))).toBe("3.4028235e+38");
    const edges: number[] = [0x00000001, 0x00000002, 0x00000003, 0x007fffff, 0x00800000, 0x00800001, 0x7f7fffff];
    for (let e = 0; e < 255; e++) {
      // Powers of two and their neighbours: the rounding interval is lopsided there.
      for (const m of [0, 1, 2, 0x7ffffe, 0x7fffff]) edges.push((e << 23) | m);
    }
    for (const pattern of edges) {
      check(float32(pattern));
      check(float32(pattern | 0x80000000));
    }
  });

  it("reads back to the same float32 with no shorter decimal that would, over random bit patterns", () => {
    let checked = 0;
    for (const pattern of patterns(60_000, 0x2545f491)) {
      const v = float32(pattern);
      if (!Number.isFinite(v)) continue;
      check(v);
      checked++;
    }
    expect(checked).toBeGreaterThan(59_000);
  });

  it("reads back over the values classifiers give (probabilities near rounding boundaries)", () => {
    // Every float32 in [2^-k, 2^-k + 40 ulps] and the decimals of up to 8 digits near 0.1.. 0.9, whose
    // neighbours are where a correctly rounded candidate can fall either side.
    for (let k = 0; k <= 40; k++) {
      const base = (127 - k) << 23;
      for (let m = 0; m < 40; m++) check(float32(base + m));
    }
    for (const pattern of patterns(20_000, 0x9e3779b9)) {
      const decimal = (pattern % 100_000_000) / 1e8;
      const v = Math.fround(decimal);
      check(v);
      bits[0] = 0;
      asFloat[0] = v;
      const at = bits[0]!;
      check(float32(at + 1));
      check(float32(at - 1));
    }
  });
});
