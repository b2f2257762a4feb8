import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { faultScenarios, faultTopology, runFaultScenario } from "../../scripts/validate/fault-scenarios.ts";
import { validationModel } from "../../scripts/validate/model.ts";
import { repositoryWithNewVersion } from "../../scripts/validate/scratch-models.ts";
import { startValidationStack, type ValidationStack } from "../../scripts/validate/stack.ts";

/**
 * Small versions of `npm run validate:faults`: the same faults on the same stack (pools behind delay proxies,
 * the nearest region 1 ms away, a second one in reach), with short phases and low load. Every request must get
 * a 200 (regional or degraded) and routing must recover once the fault ends. The budget is a second rather
 * than 10 ms so that a loaded test machine cannot push the near regions out of reach (the far region and the
 * slowdown scale with it).
 */
const model = validationModel();
const topology = faultTopology(1000);
const scenarios = faultScenarios({ model: model.name, version: "2", topology });
const timing = { rate: 40, baselineS: 1, faultS: 1.5, recoverS: 30, cronMs: 500, settleMs: 300 };

describe("faults under load (small)", () => {
  let stack: ValidationStack | undefined;
  let edge: EdgeWorker;
  let repository: Awaited<ReturnType<typeof repositoryWithNewVersion>> | undefined;
  beforeAll(async () => {
    repository = await repositoryWithNewVersion(model.name, "2");
    stack = await startValidationStack({ delays: topology.delaysMs, modelsDir: repository.dir });
    edge = await stack.startEdge({
      SLO_BUDGET_MS: String(topology.budgetMs),
      BREAKER_COOLDOWN_MS: "1000",
      BREAKER_FAILURES: "3",
      REGION_STATUS_MEMO_MS: "0",
    });
    await edge.scheduled();
  });
  afterAll(async () => {
    await stack?.stop();
    repository?.remove();
  });

  it.each(scenarios.map((s, i) => [s.name, s, i] as const))(
    "%s: no failed request, routing recovers",
    async (_, scenario, i) => {
      // Each run's inputs are its own (the seed): none can be a cache hit left by the previous one.
      const result = await runFaultScenario(stack!, edge, model, scenario, topology, { ...timing, seed: i + 1 });
      const seen = JSON.stringify({ ...result, before: undefined });
      expect(result.failures).toEqual([]);
      expect(result.failed).toBe(0);
      expect(result.before.requests).toBeGreaterThan(timing.rate * timing.baselineS * 0.9);
      expect(result.recoveryMs, seen).not.toBeNull();
      if (scenario.heal) {
        // The fault moved forwarded traffic off the nearest region (to us, or degraded), and it came back.
        const offNearest = Object.entries(result.during.answeredBy)
          .filter(([by]) => by === "regional:us" || by.startsWith("degraded:"))
          .reduce((n, [, count]) => n + count, 0);
        expect(offNearest, seen).toBeGreaterThan(0);
        expect(result.after.answeredBy[`regional:${topology.region}`], seen).toBeGreaterThan(0);
      } else {
        expect(result.newVersionAfterMs, seen).not.toBeNull();
      }
    },
  );
});
