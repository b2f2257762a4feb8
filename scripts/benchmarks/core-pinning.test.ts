import { describe, expect, it } from "vitest";
import { corePlan, parseCpuList } from "./core-pinning.ts";

describe("corePlan", () => {
  it("puts the server on the first allowed core and the generator on the second", () => {
    expect(corePlan(true, [0, 1], true)).toEqual({ pinned: true, server: "0", generator: "1" });
    expect(corePlan(true, [2, 3, 6], true)).toEqual({ pinned: true, server: "2", generator: "3" });
  });

  it("runs unpinned, saying why, when asked to, on one core, or without taskset", () => {
    expect(corePlan(false, [0, 1], true)).toEqual({ pinned: false, why: "--pin off" });
    expect(corePlan(true, [0], true)).toMatchObject({ pinned: false, why: expect.stringContaining("1 core") });
    expect(corePlan(true, [0, 1], false)).toMatchObject({ pinned: false, why: expect.stringContaining("taskset") });
  });
});

describe("parseCpuList", () => {
  it("reads single cores and ranges", () => {
    expect(parseCpuList("0,1")).toEqual([0, 1]);
    expect(parseCpuList("0-3,6\n")).toEqual([0, 1, 2, 3, 6]);
  });

  it("is empty for what is not a CPU list", () => {
    expect(parseCpuList("")).toEqual([]);
    expect(parseCpuList("0,x")).toEqual([]);
  });
});
