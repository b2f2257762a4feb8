import { describe, expect, it } from "vitest";
import { checkTraceState, formatTraceParent, isSampled, parseTraceParent, withSampled } from "./trace-context.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("parseTraceParent", () => {
  it("reads the spec's example, sampled and not", () => {
    expect(parseTraceParent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, parentId: SPAN, flags: 1 });
    const unsampled = parseTraceParent(`00-${TRACE}-${SPAN}-00`)!;
    expect(isSampled(unsampled)).toBe(false);
    expect(isSampled(parseTraceParent(`00-${TRACE}-${SPAN}-03`)!)).toBe(true);
  });

  it("refuses what a receiver must not continue", () => {
    for (const bad of [
      undefined,
      "",
      `00-${"0".repeat(32)}-${SPAN}-01`, // all-zero trace id
      `00-${TRACE}-${"0".repeat(16)}-01`, // all-zero parent id
      `00-${TRACE.toUpperCase()}-${SPAN}-01`, // upper-case hex
      `00-${TRACE}-${SPAN}-01-extra`, // version 00 has exactly four fields
      `ff-${TRACE}-${SPAN}-01`, // version ff is invalid
      `0-${TRACE}-${SPAN}-01`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-1`,
      `00_${TRACE}_${SPAN}_01`,
    ]) {
      expect(parseTraceParent(bad), String(bad)).toBeUndefined();
    }
  });

  it("reads a later version by its first four fields, ignoring what follows", () => {
    expect(parseTraceParent(`cc-${TRACE}-${SPAN}-01-what-the-future-holds`)).toEqual({
      traceId: TRACE,
      parentId: SPAN,
      flags: 1,
    });
  });

  it("tolerates surrounding spaces (header values are trimmed)", () => {
    expect(parseTraceParent(`  00-${TRACE}-${SPAN}-01 `)?.traceId).toBe(TRACE);
  });
});

describe("formatTraceParent", () => {
  it("writes version 00 with two hex digits of flags, and reads back", () => {
    const header = formatTraceParent({ traceId: TRACE, parentId: SPAN, flags: 1 });
    expect(header).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(parseTraceParent(header)).toEqual({ traceId: TRACE, parentId: SPAN, flags: 1 });
  });

  it("sets and clears only the sampled bit", () => {
    expect(withSampled(0x02, true)).toBe(0x03);
    expect(withSampled(0x03, false)).toBe(0x02);
  });
});

describe("checkTraceState", () => {
  it("passes a well-formed state on, members trimmed", () => {
    expect(checkTraceState("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")).toBe("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    expect(checkTraceState("tenant@system=1")).toBe("tenant@system=1");
  });

  it("drops a state it cannot vouch for", () => {
    expect(checkTraceState(undefined)).toBeUndefined();
    expect(checkTraceState("no-equals-sign")).toBeUndefined();
    expect(checkTraceState("Upper=1")).toBeUndefined();
    expect(checkTraceState("a=1,a=2")).toBeUndefined();
    expect(checkTraceState("a=b=c")).toBeUndefined();
    expect(checkTraceState(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","))).toBeUndefined();
    expect(checkTraceState(`k=${"v".repeat(600)}`)).toBeUndefined();
  });
});
