import { describe, expect, it } from "vitest";
import { newerVersion } from "./served-version.ts";

describe("newerVersion", () => {
  it.each([
    ["1", "2", "2"],
    ["2", "1", "2"],
    ["2", "2", "2"],
    ["9", "10", "10"],
    ["1", "", "1"],
    ["1", null, "1"],
    ["1", undefined, "1"],
    ["1", "v2", "1"],
    ["1", "2.0", "1"],
  ])("current %s, seen %j -> %s", (current, seen, expected) => {
    expect(newerVersion(current, seen)).toBe(expected);
  });
});
