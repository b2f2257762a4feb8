import { describe, expect, it } from "vitest";
import type { Region } from "../regions/region.ts";
import { degradedReason, NoRegionAnswered, RegionError } from "./errors.ts";
import { hedged } from "./hedge.ts";
import type { RegionCall, RegionDispatch } from "./types.ts";

const region = (name: string): Region => ({ name, url: `http://${name}`, latitude: 0, longitude: 0 });
const [us, eu, ap] = [region("us"), region("eu"), region("ap")];
const call: Omit<RegionCall, "region"> = {
  path: "/v1/classify",
  body: "{}",
  batch: 1,
  classes: 10,
  headers: {},
  deadlineAt: Date.now() + 60_000,
};

type Plan = Record<string, { ms: number; fail?: boolean; shed?: boolean }>;

/**
 * A dispatch that answers (or fails) after a planned delay and honours aborts the way fetch does.
 * Delays differ by 10x or more from the hedge delays used, so scheduling noise cannot flip an outcome.
 */
function planned(plan: Plan) {
  const log: { region: string; end: "answered" | "failed" | "aborted"; reason?: unknown }[] = [];
  const dispatch: RegionDispatch = (c) =>
    new Promise((resolve, reject) => {
      const { ms, fail, shed } = plan[c.region.name]!;
      const timer = setTimeout(() => {
        log.push({ region: c.region.name, end: fail || shed ? "failed" : "answered" });
        if (shed) reject(new RegionError("tenant_shed", c.region.name, "HTTP 429"));
        else if (fail) reject(new RegionError("status", c.region.name, "HTTP 503"));
        else resolve({ region: c.region.name, version: "1", probs: new Float32Array(10), ms });
      }, ms);
      c.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        log.push({ region: c.region.name, end: "aborted", reason: c.signal?.reason });
        reject(c.signal?.reason);
      });
    });
  return { dispatch, log };
}

const options = (spend = () => true) => ({ delayMs: () => 50, spendHedge: spend });

describe("hedged", () => {
  it("ends at a region that sheds the tenant: no failover, the hedge in flight aborted", async () => {
    const { dispatch, log } = planned({ us: { ms: 100, shed: true }, eu: { ms: 5000 }, ap: { ms: 1 } });
    const forward = hedged(dispatch, { ...options(), delayMs: () => 10 })([us, eu, ap], call);
    const err = await forward.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NoRegionAnswered);
    expect((err as NoRegionAnswered).errors.map((e) => e.code)).toEqual(["tenant_shed"]);
    expect(degradedReason((err as NoRegionAnswered).errors)).toBe("tenant-shed");
    expect(log.map((l) => `${l.region} ${l.end}`)).toEqual(["us failed", "eu aborted"]);
  });

  it("answers from the first region without a hedge when it is fast", async () => {
    const { dispatch, log } = planned({ us: { ms: 1 }, eu: { ms: 1 } });
    const result = await hedged(dispatch, options())([us, eu], call);
    expect(result.answer.region).toBe("us");
    expect(result.hedged).toBe(false);
    await new Promise((r) => setTimeout(r, 100)); // past the hedge delay: still no call to eu
    expect(log).toEqual([{ region: "us", end: "answered" }]);
  });

  it("hedges to the next region when the first is slow; the hedge wins and the first is aborted", async () => {
    const { dispatch, log } = planned({ us: { ms: 5000 }, eu: { ms: 1 } });
    const hedges: string[] = [];
    const result = await hedged(dispatch, { ...options(), onHedge: (r) => hedges.push(r.name) })([us, eu, ap], call);
    expect(result.answer.region).toBe("eu");
    expect(result.hedged).toBe(true);
    expect(hedges).toEqual(["eu"]);
    expect(log.map((l) => [l.region, l.end])).toEqual([
      ["eu", "answered"],
      ["us", "aborted"],
    ]);
    expect((log[1]!.reason as RegionError).code).toBe("cancelled");
  });

  it("sends no hedge when the budget refuses", async () => {
    const { dispatch, log } = planned({ us: { ms: 500 }, eu: { ms: 1 } });
    const result = await hedged(
      dispatch,
      options(() => false),
    )([us, eu], call);
    expect(result.answer.region).toBe("us");
    expect(result.hedged).toBe(false);
    expect(log).toEqual([{ region: "us", end: "answered" }]);
  });

  it("fails over to the next region at once when a call fails", async () => {
    const { dispatch, log } = planned({ us: { ms: 1, fail: true }, eu: { ms: 1, fail: true }, ap: { ms: 1 } });
    const result = await hedged(dispatch, options())([us, eu, ap], call);
    expect(result.answer.region).toBe("ap");
    expect(result.hedged).toBe(false);
    expect(result.errors.map((e) => e.region)).toEqual(["us", "eu"]);
    expect(log.map((l) => l.region)).toEqual(["us", "eu", "ap"]);
  });

  it("rejects with every region's error when none answers", async () => {
    const { dispatch } = planned({ us: { ms: 1, fail: true }, eu: { ms: 1, fail: true } });
    const err = await hedged(dispatch, options())([us, eu], call).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoRegionAnswered);
    expect((err as NoRegionAnswered).errors.map((e) => [e.region, e.code])).toEqual([
      ["us", "status"],
      ["eu", "status"],
    ]);
  });

  it("rejects at once when there are no regions", async () => {
    const { dispatch } = planned({});
    const err = await hedged(dispatch, options())([], call).catch((e: unknown) => e);
    expect((err as NoRegionAnswered).errors).toEqual([]);
  });

  it("does not fail over once the deadline has passed: the other regions are not sent anything", async () => {
    const { dispatch, log } = planned({ us: { ms: 100, fail: true }, eu: { ms: 1 }, ap: { ms: 1 } });
    const soon = { ...call, deadlineAt: Date.now() + 10 };
    const err = await hedged(dispatch, options())([us, eu, ap], soon).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoRegionAnswered);
    expect((err as NoRegionAnswered).errors.map((e) => [e.region, e.code])).toEqual([
      ["us", "status"],
      ["eu", "budget_spent"],
      ["ap", "budget_spent"],
    ]);
    expect(log.map((l) => l.region)).toEqual(["us"]);
    expect(degradedReason((err as NoRegionAnswered).errors)).toBe("deadline");
  });

  it("sends nothing when the budget is spent before the first call", async () => {
    const { dispatch, log } = planned({ us: { ms: 1 }, eu: { ms: 1 } });
    const err = await hedged(dispatch, options())([us, eu], { ...call, deadlineAt: Date.now() - 1 }).catch(
      (e: unknown) => e,
    );
    expect((err as NoRegionAnswered).errors.map((e) => [e.region, e.code])).toEqual([
      ["us", "budget_spent"],
      ["eu", "budget_spent"],
    ]);
    expect(log).toEqual([]);
    expect(degradedReason((err as NoRegionAnswered).errors)).toBe("deadline");
  });

  it("waits for the hedge when the first region fails after the hedge went out", async () => {
    const { dispatch } = planned({ us: { ms: 500, fail: true }, eu: { ms: 1000 } });
    const result = await hedged(dispatch, options())([us, eu], call);
    expect(result.answer.region).toBe("eu");
    expect(result.hedged).toBe(true);
    expect(result.errors.map((e) => e.region)).toEqual(["us"]);
  });

  describe("budget-aware: regions expected to answer later than the budget left are not tried", () => {
    const expecting = (ms: Record<string, number | undefined>) => {
      const skipped: string[] = [];
      return {
        skipped,
        options: { ...options(), expectedMs: (r: Region) => ms[r.name], onTooFar: (r: Region) => skipped.push(r.name) },
      };
    };
    const tight = () => ({ ...call, deadlineAt: Date.now() + 10_000 });

    it("skips a far region for a reachable one behind it", async () => {
      const { dispatch, log } = planned({ us: { ms: 1 }, eu: { ms: 1 } });
      const { options: o, skipped } = expecting({ us: 60_000, eu: 5 });
      const result = await hedged(dispatch, o)([us, eu], tight());
      expect(result.answer.region).toBe("eu");
      expect(log.map((l) => l.region)).toEqual(["eu"]);
      expect(skipped).toEqual(["us"]);
      expect(result.errors.map((e) => [e.region, e.code])).toEqual([["us", "too_far"]]);
    });

    it("tries a region nothing is known about", async () => {
      const { dispatch, log } = planned({ us: { ms: 1 } });
      const result = await hedged(dispatch, expecting({}).options)([us], tight());
      expect(result.answer.region).toBe("us");
      expect(log).toHaveLength(1);
    });

    it("sends nothing when every region is too far, and answers at once: degraded too-far", async () => {
      const { dispatch, log } = planned({ us: { ms: 1 }, eu: { ms: 1 } });
      const { options: o, skipped } = expecting({ us: 60_000, eu: 120_000 });
      const started = Date.now();
      const err = await hedged(dispatch, o)([us, eu], tight()).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5_000); // not the 10 s budget
      expect(err).toBeInstanceOf(NoRegionAnswered);
      expect((err as NoRegionAnswered).errors.map((e) => [e.region, e.code])).toEqual([
        ["us", "too_far"],
        ["eu", "too_far"],
      ]);
      expect(log).toEqual([]);
      expect(skipped).toEqual(["us", "eu"]);
      expect(degradedReason((err as NoRegionAnswered).errors)).toBe("too-far");
    });

    it("fails over past a far region to the next reachable one", async () => {
      const { dispatch, log } = planned({ us: { ms: 1, fail: true }, eu: { ms: 1 }, ap: { ms: 1 } });
      const result = await hedged(dispatch, expecting({ eu: 60_000 }).options)([us, eu, ap], tight());
      expect(result.answer.region).toBe("ap");
      expect(log.map((l) => l.region)).toEqual(["us", "ap"]);
      expect(result.errors.map((e) => [e.region, e.code])).toEqual([
        ["us", "status"],
        ["eu", "too_far"],
      ]);
    });

    it("hedges only to a region that can answer in time", async () => {
      const { dispatch, log } = planned({ us: { ms: 5000 }, eu: { ms: 1 }, ap: { ms: 1 } });
      const hedges: string[] = [];
      const { options: o } = expecting({ eu: 60_000 });
      const result = await hedged(dispatch, { ...o, onHedge: (r) => hedges.push(r.name) })([us, eu, ap], tight());
      expect(result.answer.region).toBe("ap");
      expect(hedges).toEqual(["ap"]);
      expect(log.map((l) => [l.region, l.end])).toEqual([
        ["ap", "answered"],
        ["us", "aborted"],
      ]);
    });

    it('a call for any distance ("regional") tries the nearest in reach first and names the regions it passed over', async () => {
      const { dispatch, log } = planned({ us: { ms: 1 }, eu: { ms: 1 }, ap: { ms: 1 } });
      const { options: o, skipped } = expecting({ us: 60_000, eu: 20_000, ap: 3 });
      const result = await hedged(dispatch, o)([us, eu, ap], { ...tight(), anyDistance: true });
      expect(result.answer.region).toBe("ap");
      expect(log.map((l) => l.region)).toEqual(["ap"]);
      // Put behind, not skipped: no too_far errors, nothing degraded; their estimates are what warm probes check.
      expect(result.errors).toEqual([]);
      expect(skipped).toEqual([]);
      expect(result.passedOver).toEqual(["us", "eu"]);
    });

    it("a call for any distance with no region in reach tries them all, nearest first, and names them all for warm probes", async () => {
      const { dispatch, log } = planned({ us: { ms: 1, fail: true }, eu: { ms: 1 } });
      const { options: o } = expecting({ us: 60_000, eu: 60_000 });
      const result = await hedged(dispatch, o)([us, eu], { ...tight(), anyDistance: true });
      expect(result.answer.region).toBe("eu");
      expect(log.map((l) => l.region)).toEqual(["us", "eu"]);
      expect(result.passedOver).toEqual(["us", "eu"]);
      // When none answers, the rejection names them too: a degraded answer still sends their warm probes.
      const none = planned({ us: { ms: 1, fail: true }, eu: { ms: 1, fail: true } });
      const err = await hedged(none.dispatch, o)([us, eu], { ...tight(), anyDistance: true }).catch((e: unknown) => e);
      expect((err as NoRegionAnswered).passedOver).toEqual(["us", "eu"]);
    });

    it("an auto call passes nothing over: what it skips are its too_far errors", async () => {
      const { dispatch } = planned({ us: { ms: 1 }, eu: { ms: 1 } });
      const result = await hedged(dispatch, expecting({ us: 60_000, eu: 5 }).options)([us, eu], tight());
      expect(result.passedOver).toEqual([]);
    });
  });
});
