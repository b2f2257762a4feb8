import { describe, expect, it } from "vitest";
import { formatRolloutHeader, parseRolloutHeader } from "./header.ts";

describe("x-edgecascade-rollout", () => {
  it("round-trips a rollout view", () => {
    const view = { id: 4, revision: 6, stable: "1", candidate: "2", phase: "running" as const, percent: 5 };
    const header = formatRolloutHeader(view);
    expect(header).toBe("id=4; revision=6; stable=1; candidate=2; phase=running; percent=5");
    expect(parseRolloutHeader(header)).toEqual(view);
  });

  it.each([
    [undefined],
    [""],
    ["id=4; revision=6; stable=1; candidate=2; phase=paused; percent=5"],
    ["id=4; revision=6; stable=1; candidate=2; phase=running; percent=101"],
    ["id=x; revision=6; stable=1; candidate=2; phase=running; percent=5"],
    ["revision=6; stable=1; candidate=2; phase=running; percent=5"],
  ])("ignores %j", (value) => {
    expect(parseRolloutHeader(value)).toBeUndefined();
  });
});
