import { describe, expect, it } from "vitest";
import { dueAt, sendOnSchedule } from "./schedule.ts";

describe("sendOnSchedule", () => {
  it("puts request i at start + i/rate", () => {
    expect([0, 1, 2, 50].map((i) => dueAt(1000, i, 50))).toEqual([1000, 1020, 1040, 2000]);
  });

  it("sends every request once, in order, never before it is due", async () => {
    const sends: { i: number; due: number; at: number }[] = [];
    await sendOnSchedule(200, 40, (i, due) => sends.push({ i, due, at: performance.now() }));
    expect(sends.map((s) => s.i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    for (const s of sends) expect(s.at).toBeGreaterThanOrEqual(s.due);
    expect(sends[39]!.due - sends[0]!.due).toBeCloseTo(195, 6);
  });

  it("sends what fell due while the process was busy at once, each with its own due time", async () => {
    const sends: { i: number; due: number; at: number }[] = [];
    await sendOnSchedule(1000, 20, (i, due) => {
      sends.push({ i, due, at: performance.now() });
      if (i === 2) {
        const until = performance.now() + 10;
        while (performance.now() < until) {} // a 10 ms stall
      }
    });
    const late = sends.filter((s) => s.i > 2 && s.i < 12);
    expect(late.every((s) => s.at - s.due > 0)).toBe(true);
    expect(sends[12]!.due - sends[3]!.due).toBeCloseTo(9, 6);
  });
});
