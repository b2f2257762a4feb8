import { describe, expect, it } from "vitest";
import { earn, fullBucket, refill, take } from "./token-bucket.ts";

describe("token bucket", () => {
  it("gives while the tokens cover what is asked, and takes nothing otherwise", () => {
    const first = take(fullBucket(10, 0), 8);
    expect(first).toEqual({ ok: true, bucket: { tokens: 2, at: 0 } });
    expect(take(first.bucket, 4)).toEqual({ ok: false, bucket: { tokens: 2, at: 0 } });
    expect(take({ tokens: 0.9, at: 0 })).toEqual({ ok: false, bucket: { tokens: 0.9, at: 0 } });
    expect(take({ tokens: 1, at: 0 })).toEqual({ ok: true, bucket: { tokens: 0, at: 0 } });
  });

  it("fills at its rate up to the burst, on a clock of ms or of µs", () => {
    const empty = { tokens: 0, at: 1000 };
    expect(refill(empty, { perS: 100, burst: 64 }, 1050).tokens).toBeCloseTo(5);
    expect(refill(empty, { perS: 100, burst: 64 }, 9000).tokens).toBe(64);
    expect(refill(empty, { perS: 100, burst: 64 }, 900)).toBe(empty);
    expect(refill({ tokens: 0, at: 1e6 }, { perS: 100, burst: 64, unitsPerS: 1e6 }, 1.05e6).tokens).toBeCloseTo(5);
    // Never brought up to date: full at the first refill.
    expect(refill({ tokens: 0, at: Number.NEGATIVE_INFINITY }, { perS: 2, burst: 3 }, 0)).toEqual({ tokens: 3, at: 0 });
    expect(take(refill({ tokens: 0, at: Number.NEGATIVE_INFINITY }, { perS: 0, burst: 0 }, 0)).ok).toBe(false);
    // Unbounded: always a token.
    const unbounded = { perS: Number.POSITIVE_INFINITY, burst: Number.POSITIVE_INFINITY };
    let bucket = refill({ tokens: 0, at: Number.NEGATIVE_INFINITY }, unbounded, 5);
    for (let i = 0; i < 3; i++) {
      const taken = take(refill(bucket, unbounded, 5));
      expect(taken.ok).toBe(true);
      bucket = taken.bucket;
    }
  });

  it("over a second, gives what the rate fills in and no more", () => {
    let bucket = { tokens: 0, at: 0 };
    let given = 0;
    for (let t = 0; t < 1000; t++) {
      const taken = take(refill(bucket, { perS: 200, burst: 64 }, t));
      bucket = taken.bucket;
      if (taken.ok) given++;
    }
    expect(given).toBeGreaterThanOrEqual(199);
    expect(given).toBeLessThanOrEqual(200);
  });

  it("filled by events: n earnings of a ratio give at most ratio * n + burst", () => {
    let bucket = fullBucket(3, 0);
    let given = 0;
    for (let i = 0; i < 1000; i++) {
      bucket = earn(bucket, 0.1, 3);
      const taken = take(bucket);
      bucket = taken.bucket;
      if (taken.ok) given++;
    }
    expect(given).toBeLessThanOrEqual(0.1 * 1000 + 3);
    expect(given).toBeGreaterThanOrEqual(0.1 * 1000 - 1);
    for (let i = 0; i < 10_000; i++) bucket = earn(bucket, 0.1, 3);
    expect(bucket.tokens).toBe(3);
  });
});
