import { describe, expect, it } from "vitest";
import { serverTimingValue } from "./server-timing.ts";

describe("serverTimingValue", () => {
  it.each([
    [{ cache: { tier: "l1", ms: 0 }, edge: false }, 'cache;dur=0.0;desc="hit-l1"'],
    [{ cache: { tier: "miss", ms: 2 }, edge: true }, 'cache;dur=2.0;desc="miss",edge;desc="digits-edge v1"'],
    [
      { cache: { tier: "bypass", ms: 0 }, edge: false, regional: { region: "eu", ms: 7, hedged: true } },
      'cache;desc="bypass",regional;dur=7.0;desc="eu",hedge',
    ],
    [
      { cache: { tier: "l2", ms: 1 }, edge: true, regional: { region: 'we"ird\\', ms: 3, hedged: false } },
      'cache;dur=1.0;desc="hit-l2",edge;desc="digits-edge v1",regional;dur=3.0;desc="we\\"ird\\\\"',
    ],
  ] as const)("%j -> %s", (trace, value) => {
    expect(serverTimingValue(trace, "digits-edge v1")).toBe(value);
  });
});
