import { describe, expect, it } from "vitest";
import { corePlan } from "./core-pinning.ts";

describe("corePlan", () => {
  it("puts the server on core 0 and the generator on core 1", () => {
    expect(corePlan(true, 2, true)).toEqual({ pinned: true, server: "0", generator: "1" });
    expect(corePlan(true, 16, true)).toEqual({ pinned: true, server: "0", generator: "1" });
  });

  it("runs unpinned, saying why, when asked to, on one core, or without taskset", () => {
    expect(corePlan(false, 2, true)).toEqual({ pinned: false, why: "--pin off" });
    expect(corePlan(true, 1, true)).toMatchObject({ pinned: false, why: expect.stringContaining("1 core") });
    expect(corePlan(true, 2, false)).toMatchObject({ pinned: false, why: expect.stringContaining("taskset") });
  });
});
