import { describe, expect, it } from "vitest";
import { resolveLoadPolicy, SESSION_BASE_BYTES, versionBytes } from "./memory-budget.ts";

describe("versionBytes", () => {
  it("counts a session's fixed cost and five times its file", () => {
    expect(versionBytes(0)).toBe(SESSION_BASE_BYTES);
    expect(versionBytes(64_387)).toBe(256 * 1024 + 5 * 64_387);
  });
});

describe("resolveLoadPolicy", () => {
  it("keeps an asked policy; auto loads everything only while every model's estimate fits the budget", () => {
    expect(resolveLoadPolicy("all", 10, 1)).toBe("all");
    expect(resolveLoadPolicy("on-demand", 1, 10)).toBe("on-demand");
    expect(resolveLoadPolicy("auto", 10, 10)).toBe("all");
    expect(resolveLoadPolicy("auto", 11, 10)).toBe("on-demand");
  });
});
