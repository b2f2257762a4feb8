import { describe, expect, it } from "vitest";
import { applyPlan } from "./apply-plan.ts";

describe("applyPlan", () => {
  it.each([
    ["start", ["check-gates", "load"]],
    ["step", []],
    ["promote", ["promote"]],
    ["adopt", ["check-gates", "load", "promote"]],
    ["rollback", ["drop"]],
    ["record", []],
    ["none", []],
  ] as const)("%s asks the repository for %j, in that order", (kind, actions) => {
    expect(applyPlan(kind).actions).toEqual(actions);
  });

  it("takes on every state but a retry of the one held", () => {
    expect(applyPlan("none")).toEqual({ actions: [], takeState: false, setPercent: false });
    for (const kind of ["start", "step", "promote", "adopt", "rollback", "record"] as const) {
      expect(applyPlan(kind).takeState).toBe(true);
    }
  });

  it("leaves the canary gauge alone for a state kept only for the record", () => {
    expect(applyPlan("record").setPercent).toBe(false);
    expect(applyPlan("step").setPercent).toBe(true);
  });

  it("counts an end once, by how it ended, and warns on a rollback only", () => {
    expect(applyPlan("promote")).toMatchObject({ ended: "promoted", log: { level: "info" } });
    expect(applyPlan("adopt")).toMatchObject({ ended: "promoted", log: { level: "info" } });
    expect(applyPlan("rollback")).toMatchObject({
      ended: "rolled-back",
      log: { level: "warn", message: "rollout rolled back: the candidate is retired" },
    });
    expect(applyPlan("start").ended).toBeUndefined();
    expect(applyPlan("step").ended).toBeUndefined();
  });
});
