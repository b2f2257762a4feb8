import { describe, expect, it } from "vitest";
import { bearerCheck } from "./bearer-check.ts";

describe("bearerCheck", () => {
  const check = bearerCheck("t0ken");
  it.each([
    ["Bearer t0ken", true],
    ["bearer  t0ken ", true],
    ["Bearer t0ken2", false],
    ["Bearer t0ke", false],
    ["Basic t0ken", false],
    ["t0ken", false],
    [undefined, false],
  ])("%j: %s", (authorization, passes) => {
    expect(check(authorization)).toBe(passes);
  });
});
