import { describe, expect, it } from "vitest";
import { rankBlock, StepCounters, tailSize } from "./step-evidence.ts";

const both = (stableMs: number, candidateMs: number, disagreements = 0) => ({
  rows: 2,
  stableMs,
  candidateMs,
  disagreements,
});
const RANKS = { quantile: 0.95, block: 20 };

describe("StepCounters", () => {
  it("counts live answers and shadow comparisons per version", () => {
    const c = new StepCounters();
    c.at(3, 0, RANKS);
    c.live("stable", true);
    c.live("candidate", false);
    c.offered(true);
    c.offered(false);
    c.shadow(both(1, 1, 1));
    c.shadow({ rows: 2, stableMs: 1, candidateMs: undefined, disagreements: 0 });
    expect(c.snapshot()).toMatchObject({
      id: 3,
      step: 0,
      live: { stable: 1, candidate: 1 },
      stable: { runs: 3, errors: 0 },
      candidate: { runs: 3, errors: 2 },
      comparisons: { rows: 2, disagreements: 1 },
      shadow: { offered: 2, ran: 2, dropped: 1 },
      latency: { pairs: 1, tail: 0, slow: 0 },
    });
  });

  it("ranks each full block of pairs: the slowest 5% of its runs, and how many were the candidate's", () => {
    const c = new StepCounters();
    c.at(1, 0, RANKS);
    // A candidate 1 ms slower on every pair, while the machine's load moves both by up to 10 ms.
    for (let i = 0; i < 39; i++) c.shadow(both(i % 10, (i % 10) + 1));
    expect(c.snapshot().latency).toEqual({ pairs: 39, tail: 2, slow: 2 });
    c.shadow(both(9, 10));
    expect(c.snapshot().latency).toEqual({ pairs: 40, tail: 4, slow: 4 });
    expect(c.snapshot().shadowMs).toEqual({ stable: expect.any(Number), candidate: expect.any(Number) });
  });

  it("starts a step from zero, with a fresh block", () => {
    const c = new StepCounters();
    c.at(1, 0, RANKS);
    for (let i = 0; i < 30; i++) c.shadow(both(1, 1));
    c.at(1, 1, RANKS);
    expect(c.snapshot()).toMatchObject({ step: 1, stable: { runs: 0 }, latency: { pairs: 0, tail: 0 } });
    for (let i = 0; i < 19; i++) c.shadow(both(1, 1));
    expect(c.snapshot().latency.tail).toBe(0);
  });
});

describe("rankBlock", () => {
  it("counts the candidate's runs among the slowest, blaming ties on the stable version", () => {
    expect(rankBlock([both(1, 5), both(4, 2), both(3, 1)], 2)).toBe(1);
    expect(rankBlock([both(5, 5), both(1, 1)], 1)).toBe(0);
    expect(tailSize({ quantile: 0.95, block: 20 })).toBe(2);
    expect(tailSize({ quantile: 0.99, block: 10 })).toBe(1);
  });
});
