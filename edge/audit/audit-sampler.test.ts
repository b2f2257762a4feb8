import { describe, expect, it } from "vitest";
import { AuditSampler } from "./audit-sampler.ts";

describe("AuditSampler", () => {
  it("audits an answer only when the draw falls within the share", () => {
    const sampler = new AuditSampler(0.1, 1000);
    expect(sampler.take(0, 0.05)).toBe(true);
    expect(sampler.take(0, 0.1)).toBe(false);
    expect(sampler.take(0, 0.99)).toBe(false);
  });

  it("never more than the per-second cap, refilled as time passes", () => {
    const sampler = new AuditSampler(1, 2);
    expect([0, 0, 0, 0].map(() => sampler.take(1000, 0))).toEqual([true, true, false, false]);
    expect(sampler.take(1250, 0)).toBe(false); // half a token back
    expect(sampler.take(1500, 0)).toBe(true); // one token back after 500 ms
    expect(sampler.take(10_000, 0)).toBe(true);
    expect(sampler.take(10_000, 0)).toBe(true);
    expect(sampler.take(10_000, 0)).toBe(false); // a long pause refills to the cap, not beyond
  });

  it("a share of 0 audits nothing", () => {
    const sampler = new AuditSampler(0, 100);
    expect(Array.from({ length: 100 }, (_, i) => sampler.take(i, i / 100)).some(Boolean)).toBe(false);
  });
});
