import { describe, expect, it } from "vitest";
import { DEFAULT_ROLLOUT_CONFIG, rolloutConfig } from "./config.ts";

describe("rolloutConfig", () => {
  it("has documented defaults and merges overrides field by field", () => {
    expect(rolloutConfig()).toEqual(DEFAULT_ROLLOUT_CONFIG);
    expect(DEFAULT_ROLLOUT_CONFIG).toMatchObject({ steps: [1, 5, 25, 100], alpha: 0.001, beta: 0.01, minSamples: 200 });
    const c = rolloutConfig({ steps: [0, 10, 100], agreement: { p1: 0.05 }, shadow: { sample: 0.5 } });
    expect(c.steps).toEqual([0, 10, 100]);
    expect(c.agreement).toEqual({ p0: 0.01, p1: 0.05 });
    expect(c.shadow).toEqual({ sample: 0.5, maxQueue: 16 });
  });

  it.each<[Parameters<typeof rolloutConfig>[0], string]>([
    [{ steps: [1, 5, 5, 100] }, '"steps" must increase strictly, got 1,5,5,100'],
    [{ steps: [1, 50] }, '"steps" must end at 100, got 1,50'],
    [{ steps: [1, 101] }, '"steps.1" must be 0 to 100'],
    [{ alpha: 0 }, '"alpha" must be in (0, 1)'],
    [{ minSamples: 1.5 }, '"minSamples" must be an integer'],
    [{ agreement: { p0: 0.05, p1: 0.02 } }, '"agreement.p1" must be above "agreement.p0"'],
    [{ latency: { p1: 0.4 } }, '"latency.p1" must be above 0.5'],
    [{ latency: { block: 15 } }, '"latency.block" must be even'],
    [{ errors: { margin0: 0.02 } }, '"errors.margin1" must be above "errors.margin0"'],
  ])("refuses %j naming the field", (overrides, message) => {
    expect(() => rolloutConfig(overrides)).toThrow(`rollout config: ${message}`);
  });
});
