import { describe, expect, it } from "vitest";
import { MIN_BASELINE_RUNS, StepCounters } from "./step-evidence.ts";

const both = (stableMs: number, candidateMs: number, disagreements = 0) => ({
  rows: 2,
  stableMs,
  candidateMs,
  disagreements,
});

describe("StepCounters", () => {
  it("counts live answers and shadow comparisons per version", () => {
    const c = new StepCounters();
    c.at(3, 0, 0.95);
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
    });
  });

  it("times candidate runs against the stable p95 once it has a baseline", () => {
    const c = new StepCounters();
    c.at(1, 0, 0.95);
    // Stable runs take 1..MIN ms; the candidate as long as the slowest 5% of them, or longer.
    for (let i = 1; i < MIN_BASELINE_RUNS; i++) c.shadow(both(i, 1000));
    expect(c.snapshot().latency).toEqual({ timed: 0, slow: 0 });
    c.shadow(both(MIN_BASELINE_RUNS, 1));
    c.shadow(both(1, 1000));
    expect(c.snapshot().latency).toEqual({ timed: 2, slow: 1 });
    expect(c.snapshot().shadowMs).toEqual({ stable: expect.any(Number), candidate: 1000 });
  });

  it("starts a step from zero, and a new rollout's windows too", () => {
    const c = new StepCounters();
    c.at(1, 0, 0.95);
    for (let i = 0; i < MIN_BASELINE_RUNS; i++) c.shadow(both(1, 1));
    c.at(1, 1, 0.95);
    expect(c.snapshot()).toMatchObject({ step: 1, stable: { runs: 0 } });
    c.shadow(both(1, 5));
    expect(c.snapshot().latency).toEqual({ timed: 1, slow: 1 });
    c.at(2, 0, 0.95);
    c.shadow(both(1, 5));
    expect(c.snapshot().latency).toEqual({ timed: 0, slow: 0 });
  });
});
