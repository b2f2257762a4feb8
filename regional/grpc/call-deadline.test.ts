import { describe, expect, it } from "vitest";
import { remainingMs } from "./call-deadline.ts";

describe("remainingMs", () => {
  it("counts from now to a Date or a Unix time in ms", () => {
    expect(remainingMs(new Date(10_250), 10_000)).toBe(250);
    expect(remainingMs(10_250, 10_000)).toBe(250);
  });
  it("is Infinity without a deadline and 0 once it has passed", () => {
    expect(remainingMs(Number.POSITIVE_INFINITY, 10_000)).toBe(Number.POSITIVE_INFINITY);
    expect(remainingMs(9_000, 10_000)).toBe(0);
  });
});
