import { describe, expect, it } from "vitest";
import { type HedgeBudget, hedgeBudgetEarn, hedgeBudgetSpend, hedgeDelay } from "./hedge-policy.ts";

describe("hedgeDelay", () => {
  it("uses the default until there are enough samples", () => {
    expect(hedgeDelay([], { defaultMs: 5 })).toBe(5);
    expect(hedgeDelay(Array(19).fill(40), { defaultMs: 5 })).toBe(5);
    expect(hedgeDelay(Array(20).fill(40), { defaultMs: 5 })).toBe(40);
  });

  it("follows the observed p95", () => {
    // 19 fast calls in 20, one slow: p95 is the 19th value.
    const samples = [...Array(19).fill(2), 300];
    expect(hedgeDelay(samples, { defaultMs: 5 })).toBe(2);
    expect(hedgeDelay([...samples, 300, 300], { defaultMs: 5, quantile: 0.9 })).toBe(300);
    expect(hedgeDelay([3], { defaultMs: 5, minSamples: 1 })).toBe(3);
  });
});

describe("hedge budget", () => {
  const run = (forwarded: number, ratio: number, burst: number, start: HedgeBudget) => {
    let budget = start;
    let hedges = 0;
    for (let i = 0; i < forwarded; i++) {
      budget = hedgeBudgetEarn(budget, ratio, burst);
      const spent = hedgeBudgetSpend(budget);
      budget = spent.budget;
      if (spent.ok) hedges++;
    }
    return hedges;
  };

  it("caps hedges at ratio x forwarded + burst, even if every request wants one", () => {
    // Float sums of 0.1 land a hair under whole tokens, so allow one hedge less than the exact bound.
    const full = run(1000, 0.1, 5, { tokens: 5 });
    expect(full).toBeLessThanOrEqual(105);
    expect(full).toBeGreaterThanOrEqual(104);
    const empty = run(1000, 0.1, 5, { tokens: 0 });
    expect(empty).toBeLessThanOrEqual(100);
    expect(empty).toBeGreaterThanOrEqual(99);
    expect(run(1000, 0, 5, { tokens: 5 })).toBe(5);
  });

  it("does not bank more than the burst during quiet periods", () => {
    let budget: HedgeBudget = { tokens: 0 };
    for (let i = 0; i < 10_000; i++) budget = hedgeBudgetEarn(budget, 0.1, 5);
    expect(budget.tokens).toBe(5);
  });

  it("refuses a hedge without a whole token", () => {
    expect(hedgeBudgetSpend({ tokens: 0.9 })).toEqual({ ok: false, budget: { tokens: 0.9 } });
    expect(hedgeBudgetSpend({ tokens: 1 })).toEqual({ ok: true, budget: { tokens: 0 } });
  });
});
