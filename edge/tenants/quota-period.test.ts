import { describe, expect, it } from "vitest";
import { quotaPeriod } from "./quota-period.ts";

describe("quota periods (UTC calendar)", () => {
  it("names the day and the month a time falls in, and when each ends", () => {
    const t = Date.UTC(2026, 11, 31, 23, 59, 59);
    expect(quotaPeriod("day", t)).toEqual({ id: "2026-12-31", endsAt: Date.UTC(2027, 0, 1) });
    expect(quotaPeriod("month", t)).toEqual({ id: "2026-12", endsAt: Date.UTC(2027, 0, 1) });
    expect(quotaPeriod("month", Date.UTC(2027, 1, 3))).toEqual({ id: "2027-02", endsAt: Date.UTC(2027, 2, 1) });
  });

  it("starts the next period at its first millisecond", () => {
    expect(quotaPeriod("day", Date.UTC(2027, 0, 1)).id).toBe("2027-01-01");
    expect(quotaPeriod("day", Date.UTC(2027, 0, 1) - 1).id).toBe("2026-12-31");
  });
});
