import { describe, expect, it } from "vitest";
import { expectedAnswerMs, withinReach } from "./reach.ts";

const NOW = 1_000_000;

describe("expectedAnswerMs", () => {
  it("is unknown for a region never heard of", () => {
    expect(expectedAnswerMs({ answers: [] }, NOW)).toBeUndefined();
  });

  it("is the median of recent answers", () => {
    expect(expectedAnswerMs({ answers: [9, 3, 4], lastAnswerAt: NOW - 10 }, NOW)).toBe(4);
    expect(expectedAnswerMs({ answers: [2, 8, 4, 6], lastAnswerAt: NOW - 10 }, NOW)).toBe(5);
  });

  it("trusts recent answers over a newer, slower probe (one slow probe must not lock out the nearest region)", () => {
    const evidence = { answers: [4, 5, 5], lastAnswerAt: NOW - 5_000, probe: { rttMs: 30, at: NOW - 1_000 } };
    expect(expectedAnswerMs(evidence, NOW)).toBe(5);
  });

  it("judges a region that has not answered lately by the probe, when the probe is newer", () => {
    const evidence = { answers: [4, 5, 5], lastAnswerAt: NOW - 90_000, probe: { rttMs: 240, at: NOW - 1_000 } };
    expect(expectedAnswerMs(evidence, NOW)).toBe(240);
  });

  it("keeps old answers when the probe is older still", () => {
    const evidence = { answers: [4, 5, 5], lastAnswerAt: NOW - 90_000, probe: { rttMs: 240, at: NOW - 200_000 } };
    expect(expectedAnswerMs(evidence, NOW)).toBe(5);
  });

  it("uses the probe for a region that never answered (a far one: every call would time out)", () => {
    expect(expectedAnswerMs({ answers: [], probe: { rttMs: 82, at: NOW - 30_000 } }, NOW)).toBe(82);
  });

  it("takes the recency horizon as an option", () => {
    const evidence = { answers: [4], lastAnswerAt: NOW - 2_000, probe: { rttMs: 50, at: NOW - 1_000 } };
    expect(expectedAnswerMs(evidence, NOW, { recentMs: 1_000 })).toBe(50);
    expect(expectedAnswerMs(evidence, NOW, { recentMs: 5_000 })).toBe(4);
  });
});

describe("withinReach", () => {
  it.each([
    [undefined, 1, true],
    [4, 8, true],
    [8, 8, true],
    [8.5, 8, false],
    [240, 9, false],
  ])("expected %s ms with %s ms left: %s", (expected, left, reachable) => {
    expect(withinReach(expected, left)).toBe(reachable);
  });
});
