import { describe, expect, it } from "vitest";
import { serverTimingValue } from "./server-timing.ts";

describe("serverTimingValue", () => {
  it.each([
    [{ cache: { tier: "l1", ms: 0 }, edge: false }, 'cache;dur=0.000;desc="hit-l1"'],
    [{ cache: { tier: "miss", ms: 2 }, edge: true }, 'cache;dur=2.000;desc="miss", edge;desc="digits-edge v1"'],
    [
      { cache: { tier: "bypass", ms: 0 }, edge: false, regional: { region: "eu", ms: 7, hedged: true } },
      'cache;desc="bypass", regional;dur=7.000;desc="eu", hedge',
    ],
    [
      { cache: { tier: "l2", ms: 1 }, edge: true, regional: { region: 'we"ird\\', ms: 3, hedged: false } },
      'cache;dur=1.000;desc="hit-l2", edge;desc="digits-edge v1", regional;dur=3.000;desc="we\\"ird\\\\"',
    ],
    [{ cache: { tier: "bypass", ms: 0 }, edge: true }, 'cache;desc="bypass", edge;desc="digits-edge v1"'],
    [{ cache: { tier: "miss", ms: 0 }, edge: true }, 'cache;dur=0.000;desc="miss", edge;desc="digits-edge v1"'],
    [{ cache: { tier: "l2", ms: 0 }, edge: false }, 'cache;dur=0.000;desc="hit-l2"'],
    [{ cache: { tier: "l1", ms: 0.25 }, edge: false }, 'cache;dur=0.250;desc="hit-l1"'],
    [
      {
        cache: { tier: "miss", ms: 0 },
        edge: true,
        regional: { region: "us", ms: 6, hedged: false },
        reserve: { ms: 2, capped: false },
      },
      'cache;dur=0.000;desc="miss", edge;desc="digits-edge v1", regional;dur=6.000;desc="us", reserve;dur=2.000;desc="client-rtt"',
    ],
    [
      { cache: { tier: "miss", ms: 0 }, edge: true, reserve: { ms: 5, capped: true } },
      'cache;dur=0.000;desc="miss", edge;desc="digits-edge v1", reserve;dur=5.000;desc="client-rtt-capped"',
    ],
  ] as const)("%j -> %s", (trace, value) => {
    expect(serverTimingValue(trace, "digits-edge v1")).toBe(value);
  });

  it("names each edge model as asked, quoted, however many answers came before", () => {
    const trace = { cache: { tier: "bypass", ms: 0 }, edge: true } as const;
    for (let i = 0; i < 2; i++) {
      expect(serverTimingValue(trace, "digits-edge v1")).toBe('cache;desc="bypass", edge;desc="digits-edge v1"');
      expect(serverTimingValue(trace, 'odd"edge v2')).toBe('cache;desc="bypass", edge;desc="odd\\"edge v2"');
    }
    expect(serverTimingValue(trace, undefined)).toBe('cache;desc="bypass"');
  });
});
