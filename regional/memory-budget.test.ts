import { describe, expect, it } from "vitest";
import { SESSION_BASE_BYTES, versionBytes } from "./memory-budget.ts";

describe("versionBytes", () => {
  it("counts a session's fixed cost and five times its file", () => {
    expect(versionBytes(0)).toBe(SESSION_BASE_BYTES);
    expect(versionBytes(64_387)).toBe(256 * 1024 + 5 * 64_387);
  });
});
