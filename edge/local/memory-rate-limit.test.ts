import { describe, expect, it } from "vitest";
import { MemoryRateLimit } from "./memory-rate-limit.ts";

describe("MemoryRateLimit", () => {
  it("lets `limit` calls per key through in a window, then refuses until the next window", async () => {
    let now = 60_000;
    const limiter = new MemoryRateLimit(2, 60, () => now);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await limiter.limit({ key: "a" })).success);
    expect(outcomes).toEqual([true, true, false]);
    expect((await limiter.limit({ key: "b" })).success).toBe(true);
    now += 60_000;
    expect((await limiter.limit({ key: "a" })).success).toBe(true);
  });
});
