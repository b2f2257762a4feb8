import { describe, expect, it } from "vitest";
import {
  CONFIDENCE_BUCKETS,
  confidenceBucket,
  driftOf,
  PSI_ALERT,
  PSI_FLOOR,
  PSI_MIN_PREDICTIONS,
  psi,
  shares,
} from "./drift.ts";

/** A ten-class held-out mix like digits': near uniform. */
const HELDOUT = shares([36, 37, 35, 37, 36, 37, 36, 36, 35, 37]);

describe("psi", () => {
  it("is 0 for the same mix and grows with the shift", () => {
    expect(psi(HELDOUT, HELDOUT)).toBe(0);
    const slight = shares([40, 33, 35, 37, 36, 37, 36, 36, 35, 37]);
    const large = shares([90, 10, 35, 37, 36, 37, 36, 36, 35, 37]);
    expect(psi(slight, HELDOUT)).toBeGreaterThan(0);
    expect(psi(slight, HELDOUT)).toBeLessThan(psi(large, HELDOUT));
  });

  it("matches the formula worked by hand, unseen classes at the floor", () => {
    const live = [0.5, 0.5, 0];
    const held = [0.25, 0.25, 0.5];
    const byHand = 2 * (0.25 * Math.log(2)) + (PSI_FLOOR - 0.5) * Math.log(PSI_FLOOR / 0.5);
    expect(psi(live, held)).toBeCloseTo(byHand, 12);
  });

  it("refuses mixes of different classes", () => {
    expect(() => psi([1], [0.5, 0.5])).toThrow(RangeError);
  });
});

describe("driftOf", () => {
  it("a stream of only two classes is over the alert threshold; the held-out mix is not", () => {
    const twoClasses = driftOf([180, 182, 0, 0, 0, 0, 0, 0, 0, 0], HELDOUT);
    expect(twoClasses.psi).toBeGreaterThan(PSI_ALERT);
    expect(twoClasses.drifted).toBe(true);
    const heldoutMix = driftOf([36, 37, 35, 37, 36, 37, 36, 36, 35, 37], HELDOUT);
    expect(heldoutMix.psi).toBeLessThan(0.01);
    expect(heldoutMix.drifted).toBe(false);
  });

  it("claims nothing below the minimum sample", () => {
    const few = driftOf([PSI_MIN_PREDICTIONS - 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], HELDOUT);
    expect(few).toMatchObject({ predictions: PSI_MIN_PREDICTIONS - 1, psi: null, drifted: false });
    expect(few.predicted[0]).toBe(1);
  });
});

describe("confidenceBucket", () => {
  it("puts a top probability in the first bucket whose bound holds it", () => {
    expect(confidenceBucket(0.1)).toBe(0);
    expect(confidenceBucket(0.2)).toBe(0);
    expect(confidenceBucket(0.21)).toBe(1);
    expect(confidenceBucket(0.995)).toBe(CONFIDENCE_BUCKETS.length - 1);
    expect(confidenceBucket(1)).toBe(CONFIDENCE_BUCKETS.length - 1);
  });
});
