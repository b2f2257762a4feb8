import { describe, expect, it } from "vitest";
import { clearsThreshold, edgeIsConfident } from "./cascade-rule.ts";

const T = 0.678228;

describe("the cascade rule", () => {
  it("a row clears the threshold at or above it; NaN never does", () => {
    expect(clearsThreshold(T, T)).toBe(true);
    expect(clearsThreshold(0.99, T)).toBe(true);
    expect(clearsThreshold(T - 1e-6, T)).toBe(false);
    expect(clearsThreshold(Number.NaN, T)).toBe(false);
    expect(clearsThreshold(0, 0)).toBe(true);
  });

  it("a request is the edge's only when every row clears, and it has rows", () => {
    expect(edgeIsConfident([0.99, 0.95, T], T)).toBe(true);
    expect(edgeIsConfident([0.99, 0.5, 0.99], T)).toBe(false);
    expect(edgeIsConfident([], T)).toBe(false);
  });
});
