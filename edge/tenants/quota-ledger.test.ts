import { describe, expect, it } from "vitest";
import { grantLease, type LeaseRequest } from "./quota-ledger.ts";

const DEC = Date.UTC(2026, 11, 3, 12);
const ask = (request: Partial<LeaseRequest> = {}): LeaseRequest => ({
  per: "month",
  limit: 100,
  slice: 30,
  ...request,
});

describe("a tenant's quota ledger", () => {
  it("grants slices until the quota is used, counting them as used when granted", () => {
    let ledger = grantLease(undefined, ask(), DEC);
    expect(ledger.grant).toMatchObject({ period: "2026-12", granted: 30, used: 30, limit: 100 });
    ledger = grantLease(ledger.ledger, ask(), DEC);
    ledger = grantLease(ledger.ledger, ask(), DEC);
    expect(ledger.grant).toMatchObject({ granted: 30, used: 90 });
    ledger = grantLease(ledger.ledger, ask(), DEC);
    expect(ledger.grant).toMatchObject({ granted: 10, used: 100 });
    expect(grantLease(ledger.ledger, ask(), DEC).grant).toMatchObject({ granted: 0, used: 100 });
  });

  it("never grants more in a period than the quota, however many isolates ask", () => {
    let ledger = grantLease(undefined, ask({ slice: 7 }), DEC).ledger;
    let total = 7;
    for (let i = 0; i < 50; i++) {
      const next = grantLease(ledger, ask({ slice: 7 }), DEC);
      ledger = next.ledger;
      total += next.grant.granted;
    }
    expect(total).toBe(100);
  });

  it("credits what is given back in the same period, and charges what was served without a lease", () => {
    const { ledger } = grantLease(undefined, ask({ slice: 100 }), DEC);
    const back = grantLease(ledger, ask({ slice: 0, returned: { period: "2026-12", requests: 40 } }), DEC);
    expect(back.grant.used).toBe(60);
    const stale = grantLease(ledger, ask({ slice: 0, returned: { period: "2026-11", requests: 40 } }), DEC);
    expect(stale.grant.used).toBe(100);
    const owed = grantLease(back.ledger, ask({ slice: 10, served: 5 }), DEC);
    expect(owed.grant).toMatchObject({ granted: 10, used: 75 });
  });

  it("starts each period from nothing, and ends leases with it", () => {
    const { ledger } = grantLease(undefined, ask({ slice: 100 }), DEC);
    const january = grantLease(ledger, ask(), Date.UTC(2027, 0, 1));
    expect(january.grant).toMatchObject({ period: "2027-01", granted: 30, used: 30, endsAt: Date.UTC(2027, 1, 1) });
    expect(grantLease(undefined, ask({ per: "day" }), DEC).grant).toMatchObject({
      period: "2026-12-03",
      endsAt: Date.UTC(2026, 11, 4),
    });
  });

  it("applies the latest limit an isolate sends", () => {
    const { ledger } = grantLease(undefined, ask({ slice: 80 }), DEC);
    expect(grantLease(ledger, ask({ limit: 50 }), DEC).grant).toMatchObject({ granted: 0, used: 80, limit: 50 });
  });
});
