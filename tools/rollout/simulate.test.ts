import { describe, expect, it } from "vitest";
import { DEFAULT_ROLLOUT_CONFIG, rolloutConfig } from "../../protocol/rollout/config.ts";
import { IDENTICAL, simulateMany } from "./simulate.ts";

// Whole rollouts decided as the controller decides them, on simulated counts (seeded): how often a candidate
// identical to the stable version is rolled back, and how many requests each decision takes at the effect
// sizes of the load tests (test/e2e/rollout.test.ts).
const traffic = { requestsPerTick: 100, shadowShare: 1 };

describe("simulated rollouts", () => {
  it("rarely rolls back an identical candidate with the defaults (2000 rollouts), promoting it in ~2,200 requests", () => {
    const s = simulateMany(DEFAULT_ROLLOUT_CONFIG, IDENTICAL, traffic, 2000, 1);
    expect(s.undecided).toBe(0);
    // The bound: per step and test alpha / (1 - beta); only the latency test has events under H0 (an
    // identical candidate never errs nor disagrees), four steps. Seeded: 5 of 2000.
    expect(s.rolledBack / s.runs).toBeLessThan((4 * 0.001) / 0.99);
    expect(Object.keys(s.byTest)).toEqual(s.rolledBack > 0 ? ["latency"] : []);
    // The error test needs 509 clean runs per step, the latency test ~32 ranked runs (~320 pairs).
    expect(s.meanRequests).toBeGreaterThan(2000);
    expect(s.meanRequests).toBeLessThan(2500);
  });

  it("keeps false rollbacks under the bound with a loose alpha: 4 steps x 3 tests x alpha / (1 - beta)", () => {
    const config = rolloutConfig({ alpha: 0.05, beta: 0.05, minSamples: 20 });
    const s = simulateMany(config, IDENTICAL, traffic, 2000, 2);
    const bound = (4 * 3 * 0.05) / 0.95;
    expect(s.rolledBack / s.runs).toBeLessThan(bound);
    // Only the latency test has events under H0 (an identical candidate never errs nor disagrees).
    expect(Object.keys(s.byTest)).toEqual(s.rolledBack > 0 ? ["latency"] : []);
  });

  it.each([
    ["disagrees on 4% of rows", { ...IDENTICAL, disagreement: 0.04 }, "agreement", 800],
    ["always has the slowest runs of its shadow pairs", { ...IDENTICAL, slow: 1 }, "latency", 200],
    ["fails 2% of runs", { ...IDENTICAL, errors: { stable: 0, candidate: 0.02 } }, "errors", 600],
  ])("rolls back a candidate that %s, by that test, at once", (_what, effects, test, within) => {
    const s = simulateMany(DEFAULT_ROLLOUT_CONFIG, effects, traffic, 500, 3);
    expect(s).toMatchObject({ rolledBack: 500, byTest: { [test]: 500 } });
    expect(s.p95Requests).toBeLessThanOrEqual(within);
  });
});
