import { describe, expect, it } from "vitest";
import { expectedAnswerMs, reachFirst, withinReach } from "./reach.ts";

const at = (ms: number, t: number) => ({ ms, at: t });

describe("expectedAnswerMs", () => {
  it("is unknown for a region never heard of, without a prior", () => {
    expect(expectedAnswerMs({ samples: [] })).toBeUndefined();
  });

  it("is the prior until the isolate has evidence of its own", () => {
    expect(expectedAnswerMs({ samples: [], priorMs: 90 })).toBe(90);
  });

  it("is the (lower) median of the answer times once there are some, over the prior", () => {
    expect(expectedAnswerMs({ samples: [at(9, 1), at(3, 2), at(4, 3)], priorMs: 90 })).toBe(4);
    expect(expectedAnswerMs({ samples: [at(2, 1), at(8, 2), at(4, 3), at(6, 4)] })).toBe(4);
  });

  it("takes a warm probe newer than every answer over those answers (how a region judged too far comes back)", () => {
    const slowUnderLoad = [at(30, 100), at(25, 200), at(40, 300)];
    expect(expectedAnswerMs({ samples: [...slowUnderLoad, { ms: 2, at: 5_000, warmProbe: true }] })).toBe(2);
  });

  it("takes the answers after the latest warm probe with it", () => {
    const samples = [at(30, 100), { ms: 2, at: 5_000, warmProbe: true }, at(3, 6_000), at(4, 7_000), at(5, 8_000)];
    expect(expectedAnswerMs({ samples })).toBe(3);
  });

  it("a warm probe that finds a region far replaces its fast but older answers", () => {
    expect(expectedAnswerMs({ samples: [at(3, 100), { ms: 240, at: 200, warmProbe: true }], priorMs: 2 })).toBe(240);
  });

  it("counts a call cut off by the deadline as slower than any budget, until a warm probe measures again", () => {
    const cut = { ms: 590, at: 100, cutOff: true };
    expect(expectedAnswerMs({ samples: [cut], priorMs: 2 })).toBe(Number.POSITIVE_INFINITY);
    expect(expectedAnswerMs({ samples: [at(3, 50), at(4, 60), cut] })).toBe(4);
    // One cut-off beside one answer is not yet a majority.
    expect(expectedAnswerMs({ samples: [{ ms: 3, at: 50, warmProbe: true }, cut] })).toBe(3);
    expect(expectedAnswerMs({ samples: [{ ms: 3, at: 50, warmProbe: true }, cut, cut] })).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(expectedAnswerMs({ samples: [cut, { ms: 1000, at: 200, warmProbe: true }] })).toBe(1000);
    expect(expectedAnswerMs({ samples: [cut, { ms: 2000, at: 200, warmProbe: true, cutOff: true }] })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});

describe("expectedAnswerMs at a higher quantile (REACH_QUANTILE)", () => {
  const answers = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((ms, i) => at(ms, i));
  const cut = (t: number) => ({ ms: 10, at: t, cutOff: true });

  it("is the nearest-rank quantile of the same evidence, the lower median at 0.5", () => {
    expect(expectedAnswerMs({ samples: answers }, 0.5)).toBe(7);
    expect(expectedAnswerMs({ samples: answers }, 0.9)).toBe(11);
    expect(expectedAnswerMs({ samples: answers }, 1)).toBe(12);
    expect(expectedAnswerMs({ samples: answers })).toBe(7);
  });

  it("turns a region whose calls are often cut off out of reach long before most of them are", () => {
    // Two of ten cut off by the deadline: the median still says 7 ms, the 0.9 quantile says it will not make it.
    const samples = [...answers.slice(0, 8), cut(20), cut(21)];
    expect(expectedAnswerMs({ samples }, 0.5)).toBe(7);
    expect(expectedAnswerMs({ samples }, 0.9)).toBe(Number.POSITIVE_INFINITY);
    // One in ten is within it.
    expect(expectedAnswerMs({ samples: [...answers.slice(0, 9), cut(20)] }, 0.9)).toBe(11);
  });

  it("is the nearest rank on few samples too: one cut-off among the first few since a warm probe is more than one in ten", () => {
    const probe = { ms: 4, at: 5_000, warmProbe: true };
    expect(expectedAnswerMs({ samples: [probe, cut(5_001)] }, 0.9)).toBe(Number.POSITIVE_INFINITY);
    expect(expectedAnswerMs({ samples: [probe, cut(5_001)] }, 0.5)).toBe(4);
  });

  it("still lets a warm probe alone bring a region back", () => {
    const samples = [cut(1), cut(2), { ms: 4, at: 5_000, warmProbe: true }];
    expect(expectedAnswerMs({ samples }, 0.9)).toBe(4);
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

describe("reachFirst", () => {
  const expected: Record<string, number | undefined> = { near: 900, mid: 4, far: 240, unknown: undefined };
  it("puts the regions in reach first, then the rest, each in the given order, skipping none", () => {
    expect(reachFirst(["near", "mid", "unknown", "far"], (r) => expected[r], 9)).toEqual([
      "mid",
      "unknown",
      "near",
      "far",
    ]);
  });

  it("keeps the nearest first when none is in reach", () => {
    expect(reachFirst(["near", "far"], (r) => expected[r], 9)).toEqual(["near", "far"]);
  });
});
