import { describe, expect, it } from "vitest";
import { describeLoading } from "./loading-line.ts";

describe("describeLoading", () => {
  it("says how the pools load and within what budget, and the edge's session budget", () => {
    expect(
      describeLoading(
        { policy: "on-demand", memoryBudgetBytes: 256 * 2 ** 20, available: 2000, loaded: 3 },
        { budgetBytes: 32 * 2 ** 20, resident: 2 },
        1000,
      ),
    ).toBe(
      "pools load models on demand within 256 MiB per worker (3 of 2000 loaded); edge sessions on first use within 32 MiB per isolate (2 of 1000 resident)",
    );
    expect(describeLoading({ policy: "all", available: 4, loaded: 4 }, undefined, 2)).toBe(
      "pools load all 4 models at start; edge sessions: unknown",
    );
  });
});
