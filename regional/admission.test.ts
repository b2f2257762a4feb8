import { describe, expect, it } from "vitest";
import { admission, answeringRate, BUCKET_MS, countAnswer, MEMORY_MS, NO_ANSWERS } from "./admission.ts";

const answersAt = (times: number[]) => times.reduce(countAnswer, NO_ANSWERS);

describe("answering rate", () => {
  it("is the best 100 ms bucket, in answers per second", () => {
    // 5 answers in [1000, 1100), 20 in [1100, 1200), then one at 1200.
    const times = [
      ...Array.from({ length: 5 }, (_, i) => 1000 + i),
      ...Array.from({ length: 20 }, (_, i) => 1100 + i),
      1200,
    ];
    expect(answeringRate(answersAt(times), 1210)).toBe(200);
  });

  it("counts the bucket in progress when it is already better", () => {
    const times = Array.from({ length: 30 }, (_, i) => 5000 + i);
    expect(answeringRate(answersAt(times), 5050)).toBe(300);
  });

  it("forgets the best bucket after 10 s", () => {
    const busy = Array.from({ length: 50 }, (_, i) => 1000 + i);
    const rate = answersAt([...busy, 1100, 1100 + MEMORY_MS + BUCKET_MS + 1]);
    expect(answeringRate(rate, 1100 + MEMORY_MS + BUCKET_MS + 2)).toBe(10);
  });

  it("is 0 before any answer", () => {
    expect(answeringRate(NO_ANSWERS, 123)).toBe(0);
  });
});

describe("admission", () => {
  it("admits what the pool can answer within the deadline (Little's law)", () => {
    // 20 requests ahead at 1000 answers/s: 20 ms of waiting.
    expect(admission(20, 1000, 50, 4)).toEqual({ admit: true, waitMs: 20 });
    expect(admission(20, 1000, 10, 4)).toEqual({ admit: false, waitMs: 20 });
  });

  it("always admits up to a batch's worth, and requests without a deadline", () => {
    expect(admission(3, 100, 1, 4).admit).toBe(true);
    expect(admission(500, 100, Number.POSITIVE_INFINITY, 4).admit).toBe(true);
  });

  it("admits while the rate is unknown (a pool that has not answered yet)", () => {
    expect(admission(100, 0, 5, 4)).toEqual({ admit: true, waitMs: 0 });
  });
});
