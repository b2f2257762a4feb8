import { describe, expect, it } from "vitest";
import { clientRttMs, forwardDeadline } from "./client-reserve.ts";

const AT = 1_000_000;

describe("forwardDeadline", () => {
  it.each([
    // budget, client RTT, max share -> reserve, capped
    [10, undefined, 0.5, 0, false],
    [10, 2, 0.5, 2, false],
    [10, 5, 0.5, 5, false],
    [10, 6, 0.5, 5, true],
    [10, 120, 0.5, 5, true],
    [1000, 120, 0.5, 120, false],
    [10, 3, 0, 0, true],
    [10, 9, 0.9, 9, false],
    [2.5, 2, 0.5, 1.25, true],
  ])("budget %s ms, client RTT %s ms, at most %s of it: %s ms kept back", (budget, rtt, share, reserve, capped) => {
    expect(forwardDeadline(AT, budget, rtt, share)).toEqual({
      deadlineAt: AT + budget - reserve,
      reserveMs: reserve,
      capped,
    });
  });

  it("a request the edge cannot answer without creating a session gives the regions LOAD_WAIT_MS more", () => {
    expect(forwardDeadline(AT, 10, 2, 0.5, 100)).toEqual({ deadlineAt: AT + 108, reserveMs: 2, capped: false });
    expect(forwardDeadline(AT, 10, 2, 0.5, 0)).toEqual(forwardDeadline(AT, 10, 2, 0.5));
  });

  it("a slower client link never leaves the regions less than the floor", () => {
    const floors = [1, 10, 100, 10_000].map((rtt) => forwardDeadline(AT, 10, rtt, 0.5).deadlineAt - AT);
    expect(floors).toEqual([9, 5, 5, 5]);
  });

  it("unknown round trip: the whole budget, as without a reserve", () => {
    expect(forwardDeadline(AT, 10, undefined, 0.9).deadlineAt).toBe(AT + 10);
  });
});

describe("clientRttMs", () => {
  it.each([
    [undefined, undefined],
    [{}, undefined],
    [{ clientTcpRtt: 22 }, 22],
    [{ clientTcpRtt: 22, clientQuicRtt: 0 }, 22],
    [{ clientTcpRtt: 0, clientQuicRtt: 42 }, 42],
    [{ clientQuicRtt: 42 }, 42],
    // Miniflare's placeholder and a connection that measured nothing: unknown, not a round trip of 0 ms.
    [{ clientTcpRtt: 0 }, undefined],
    [{ clientTcpRtt: 0, clientQuicRtt: 0 }, undefined],
    [{ clientTcpRtt: -3 }, undefined],
    [{ clientTcpRtt: "22" }, undefined],
    [{ clientTcpRtt: Number.NaN }, undefined],
    [{ clientTcpRtt: Number.POSITIVE_INFINITY }, undefined],
  ])("cf %j: %s", (cf, rtt) => {
    expect(clientRttMs(cf)).toBe(rtt);
  });
});
