import { describe, expect, it } from "vitest";
import {
  callAnswered,
  callFailed,
  type LeaseState,
  NO_LEASE,
  type QuotaLeaseOptions,
  startCall,
  takeRequest,
} from "./quota-lease.ts";
import { grantLease, type QuotaLedger } from "./quota-ledger.ts";

const OPTIONS: QuotaLeaseOptions = { slice: 10, leaseMs: 60_000, recheckMs: 10_000, failOpenMs: 5_000 };
const T0 = Date.UTC(2026, 11, 3, 12);
const grant = (granted: number, period = "2026-12", endsAt = Date.UTC(2027, 0, 1)) => ({
  period,
  endsAt,
  granted,
  used: 0,
  limit: 100,
});

describe("an isolate's lease of a tenant's quota", () => {
  it("serves its first request on credit and asks; then serves from the lease, renewing at half", () => {
    const first = takeRequest(NO_LEASE, T0, OPTIONS);
    expect(first.verdict).toEqual({ kind: "credit" });
    const call = startCall(first.state);
    expect(call.report).toEqual({ returned: undefined, served: 1 });
    let state = callAnswered(call.state, grant(10), T0 + 5, OPTIONS);
    const kinds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const taken = takeRequest(state, T0 + 10, OPTIONS);
      state = taken.state;
      kinds.push(taken.verdict.kind === "serve" ? (taken.verdict.renew ? "renew" : "serve") : taken.verdict.kind);
    }
    // 10 left: the 6th request leaves 4 (< half of 10), and asks for the next lease from then on.
    expect(kinds).toEqual(["serve", "serve", "serve", "serve", "serve", "renew", "renew", "renew", "renew", "renew"]);
    expect(takeRequest(state, T0 + 10, OPTIONS).verdict).toEqual({ kind: "credit" });
  });

  it("refuses once the object grants nothing, until the period ends, and asks again after the recheck", () => {
    let state = callAnswered(NO_LEASE, grant(0), T0, OPTIONS);
    const refused = takeRequest(state, T0 + 1000, OPTIONS);
    expect(refused.verdict.kind).toBe("refuse");
    expect((refused.verdict as { retryAfterS: number }).retryAfterS).toBe(
      Math.ceil((Date.UTC(2027, 0, 1) - T0 - 1000) / 1000),
    );
    expect(takeRequest(state, T0 + OPTIONS.recheckMs, OPTIONS).verdict).toEqual({ kind: "ask" });
    state = callAnswered(state, grant(3), T0 + OPTIONS.recheckMs, OPTIONS);
    expect(takeRequest(state, T0 + OPTIONS.recheckMs, OPTIONS).verdict.kind).toBe("serve");
  });

  it("keeps serving a lease it holds after a renewal granted nothing, without asking again until the recheck", () => {
    let state = callAnswered(NO_LEASE, grant(4), T0, OPTIONS);
    state = callAnswered(state, grant(0), T0 + 1, OPTIONS);
    expect(state.left).toBe(4);
    const taken = takeRequest(state, T0 + 2, OPTIONS);
    expect(taken.verdict).toEqual({ kind: "serve", renew: false });
  });

  it("gives back an old lease's unused requests with its next call", () => {
    const state = callAnswered(NO_LEASE, grant(10), T0, OPTIONS);
    const later = takeRequest(state, T0 + OPTIONS.leaseMs, OPTIONS);
    expect(later.verdict).toEqual({ kind: "credit" });
    expect(startCall(later.state).report).toEqual({ returned: { period: "2026-12", requests: 10 }, served: 1 });
  });

  it("drops a lease when its period ends; what was owed goes with the next period's call", () => {
    const end = Date.UTC(2027, 0, 1);
    const state: LeaseState = { ...callAnswered(NO_LEASE, grant(10), T0, OPTIONS), owed: 2 };
    const next = takeRequest(state, end, OPTIONS);
    expect(next.verdict).toEqual({ kind: "credit" });
    expect(next.state.left).toBe(0);
    expect(startCall(next.state).report).toEqual({ returned: undefined, served: 3 });
  });

  it("fails open: after a failed call requests are served unmetered, then the next one tries again", () => {
    const first = takeRequest(NO_LEASE, T0, OPTIONS);
    const call = startCall(first.state);
    let state = callFailed(call.state, call.report, T0 + 1, OPTIONS);
    const kinds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const taken = takeRequest(state, T0 + 100, OPTIONS);
      state = taken.state;
      kinds.push(taken.verdict.kind);
    }
    expect(kinds).toEqual(["unmetered", "unmetered", "unmetered"]);
    expect(takeRequest(state, T0 + 1 + OPTIONS.failOpenMs, OPTIONS).verdict.kind).toBe("credit");
    // Everything served without a lease is reported with the call that gets through.
    expect(startCall(state).report.served).toBe(4);
  });

  it("holds several isolates to the quota within their first calls' credit", () => {
    // Three isolates, a quota of 100, slices of 10: each serves until refused; grants go through one ledger.
    let ledger: QuotaLedger | undefined;
    const isolates: LeaseState[] = [NO_LEASE, NO_LEASE, NO_LEASE];
    let served = 0;
    let now = T0;
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < isolates.length; i++) {
        now += 1;
        const taken = takeRequest(isolates[i]!, now, OPTIONS);
        isolates[i] = taken.state;
        const kind = taken.verdict.kind;
        if (kind === "serve" || kind === "credit") served++;
        const wantsCall =
          kind === "credit" || kind === "ask" || (taken.verdict.kind === "serve" && taken.verdict.renew);
        if (wantsCall) {
          // The call is answered before this isolate's next request (a fast object).
          const call = startCall(isolates[i]!);
          const answer = grantLease(
            ledger,
            { per: "month", limit: 100, slice: OPTIONS.slice, served: call.report.served },
            now,
          );
          ledger = answer.ledger;
          isolates[i] = callAnswered(call.state, answer.grant, now, OPTIONS);
        }
      }
    }
    expect(served).toBeLessThanOrEqual(100);
    expect(served).toBeGreaterThanOrEqual(100 - isolates.length * OPTIONS.slice);
  });
});
