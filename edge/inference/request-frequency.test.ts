import { describe, expect, it } from "vitest";
import { RequestFrequency } from "./request-frequency.ts";

describe("RequestFrequency", () => {
  it("counts each key, and halves every count once the window is full", () => {
    const f = new RequestFrequency<string>(10);
    for (let i = 0; i < 6; i++) f.count("hot");
    for (let i = 0; i < 3; i++) f.count("warm");
    expect([f.of("hot"), f.of("warm"), f.of("cold")]).toEqual([6, 3, 0]);
    f.count("once"); // the tenth count: everything halves, "once" is forgotten
    expect([f.of("hot"), f.of("warm"), f.of("once")]).toEqual([3, 1, 0]);
  });
});
