import { describe, expect, it } from "vitest";
import { MAX_SHED_BACKOFF_MS, shedBackoffMs } from "./shed-backoff-policy.ts";

describe("the backoff after a region shed a tenant", () => {
  it("is the pool's Retry-After, at most a second", () => {
    expect(shedBackoffMs("1")).toBe(1000);
    expect(shedBackoffMs("0.25")).toBe(250);
    expect(shedBackoffMs("0")).toBe(0);
    expect(shedBackoffMs("30")).toBe(MAX_SHED_BACKOFF_MS);
  });

  it("is the longest when the pool said nothing usable", () => {
    expect(shedBackoffMs(null)).toBe(MAX_SHED_BACKOFF_MS);
    expect(shedBackoffMs("Wed, 21 Oct 2026 07:28:00 GMT")).toBe(MAX_SHED_BACKOFF_MS);
    expect(shedBackoffMs("-1")).toBe(MAX_SHED_BACKOFF_MS);
  });
});
