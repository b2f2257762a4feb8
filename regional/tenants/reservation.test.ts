import { describe, expect, it } from "vitest";
import { burstRows, fullBucket, refill, take } from "./reservation.ts";

describe("a reservation's bucket of rows", () => {
  it("holds a quarter second of the reservation, and at least one full request", () => {
    expect(burstRows(4000, 64)).toBe(1000);
    expect(burstRows(100, 64)).toBe(64);
  });

  it("covers calls while it has the rows, then lets the rest run as best-effort without taking any", () => {
    let bucket = fullBucket(10, 0);
    const first = take(bucket, 8);
    expect(first.reserved).toBe(true);
    bucket = first.bucket;
    const second = take(bucket, 4);
    expect(second).toEqual({ bucket: { tokens: 2, atUs: 0 }, reserved: false });
  });

  it("fills at the reserved rate up to the burst", () => {
    const empty = { tokens: 0, atUs: 1_000_000 };
    expect(refill(empty, 100, 64, 1_050_000).tokens).toBeCloseTo(5);
    expect(refill(empty, 100, 64, 9_000_000).tokens).toBe(64);
    expect(refill(empty, 100, 64, 900_000)).toBe(empty);
  });

  it("over a second, reserves what the rate gives and no more", () => {
    let bucket = { tokens: 0, atUs: 0 };
    let reserved = 0;
    for (let t = 0; t < 1_000_000; t += 1000) {
      bucket = refill(bucket, 200, 64, t);
      const taken = take(bucket, 1);
      bucket = taken.bucket;
      if (taken.reserved) reserved++;
    }
    expect(reserved).toBeGreaterThanOrEqual(199);
    expect(reserved).toBeLessThanOrEqual(200);
  });
});
