import { describe, expect, it } from "vitest";
import { type TenantTally, twoTenantVerdict } from "./tenant-verdict.ts";

const tally = (over: Partial<TenantTally>): TenantTally => ({
  sent: 1000,
  statuses: { 200: 1000 },
  refusals: {},
  mixedUp: 0,
  p50Ms: 1,
  p99Ms: 2,
  rowsPerS: 100,
  sendLagP99Ms: 0.1,
  ...over,
});
const SLO = { p99Ratio: 1.5, successRate: 0.99, deadlineMs: 10 };
const round = (alone: Partial<TenantTally>, withB: Partial<TenantTally>, b: Partial<TenantTally> = {}) => ({
  aAlone: tally(alone),
  aWithB: tally(withB),
  b: tally({ statuses: { 200: 10, 429: 90, edge: 900 }, ...b }),
});

describe("the two-tenant verdict", () => {
  it("judges the median of the rounds' own p99 ratios, and A's success over every round", () => {
    const v = twoTenantVerdict(
      [
        round({ p99Ms: 2 }, { p99Ms: 3, statuses: { 200: 995, 429: 5 } }),
        round({ p99Ms: 8 }, { p99Ms: 8 }),
        round({ p99Ms: 2 }, { p99Ms: 9 }),
      ],
      SLO,
    );
    expect(v).toEqual({
      p99Ratio: 1.5,
      p99Ratios: [1.5, 1, 4.5],
      successWithB: 0.998,
      successAlone: 1,
      aWithinSlo: true,
      p99WithinDeadline: true,
      bRefusedNotFailed: true,
      lost: 0,
      mixedUp: 0,
    });
  });

  it("fails A on a p99 moved past the ratio, or too few successes; says whether the p99 is within the deadline", () => {
    expect(twoTenantVerdict([round({ p99Ms: 2 }, { p99Ms: 3.1 })], SLO)).toMatchObject({
      aWithinSlo: false,
      p99WithinDeadline: true,
    });
    expect(twoTenantVerdict([round({ p99Ms: 9 }, { p99Ms: 11 })], SLO)).toMatchObject({
      aWithinSlo: true,
      p99WithinDeadline: false,
    });
    expect(twoTenantVerdict([round({}, { statuses: { 200: 980, 429: 20 } })], SLO).aWithinSlo).toBe(false);
  });

  it("counts lost requests and mixed-up answers over every phase, and B's statuses other than 200, 429, 504", () => {
    const v = twoTenantVerdict(
      [round({ statuses: { 200: 999, 0: 1 } }, { mixedUp: 2 }, { statuses: { 200: 5, 429: 990, 503: 5 } })],
      SLO,
    );
    expect(v).toMatchObject({ lost: 1, mixedUp: 2, bRefusedNotFailed: false });
  });
});
