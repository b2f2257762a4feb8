import { describe, expect, it } from "vitest";
import { DEFAULT_ROLLOUT_CONFIG, rolloutConfig } from "../../protocol/rollout/config.ts";
import { IDENTICAL, simulateMany } from "./simulate.ts";

// Whole rollouts decided as the controller decides them, on simulated counts (seeded): how often a candidate
// identical to the stable version is rolled back, and how many requests each decision takes at the effect
// sizes of the load tests (test/e2e/rollout.test.ts).
const traffic = { requestsPerTick: 100, shadowShare: 1 };

describe("simulated rollouts", () => {
  it("never rolls back an identical candidate with the defaults (1000 rollouts), promoting it in ~1,900 requests", () => {
    const s = simulateMany(DEFAULT_ROLLOUT_CONFIG, IDENTICAL, traffic, 1000, 1);
    expect(s).toMatchObject({ promoted: 1000, rolledBack: 0, undecided: 0 });
    // The error test is the slowest to accept: 509 clean runs per step, four steps.
    expect(s.meanRequests).toBeGreaterThan(1800);
    expect(s.meanRequests).toBeLessThan(2100);
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
    ["is always slower than the stable p95", { ...IDENTICAL, slow: 1 }, "latency", 200],
    ["fails 2% of runs", { ...IDENTICAL, errors: { stable: 0, candidate: 0.02 } }, "errors", 600],
  ])("rolls back a candidate that %s, by that test, at once", (_what, effects, test, within) => {
    const s = simulateMany(DEFAULT_ROLLOUT_CONFIG, effects, traffic, 500, 3);
    expect(s).toMatchObject({ rolledBack: 500, byTest: { [test]: 500 } });
    expect(s.p95Requests).toBeLessThanOrEqual(within);
  });
});
