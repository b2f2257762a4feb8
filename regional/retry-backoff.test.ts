import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_BACKOFF, retryDelayMs } from "./retry-backoff.ts";

describe("retryDelayMs", () => {
  const backoff = { initialMs: 1_000, maxMs: 30_000 };

  it("no failure: no wait", () => {
    expect(retryDelayMs(0, backoff)).toBe(0);
  });

  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [5, 16_000],
    [6, 30_000],
    [7, 30_000],
    [10_000, 30_000],
  ])("after %i consecutive failures: %i ms (doubling, capped)", (failures, ms) => {
    expect(retryDelayMs(failures, backoff)).toBe(ms);
  });

  it("no backoff configured: retries at once", () => {
    expect(retryDelayMs(50, { initialMs: 0, maxMs: 0 })).toBe(0);
  });

  it("the default starts at 1 s and stops growing at 30 s", () => {
    expect(retryDelayMs(1, DEFAULT_RETRY_BACKOFF)).toBe(1_000);
    expect(retryDelayMs(100, DEFAULT_RETRY_BACKOFF)).toBe(30_000);
  });
});
