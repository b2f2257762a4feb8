import { describe, expect, it } from "vitest";
import {
  admission,
  answeringRate,
  BUCKET_MS,
  bestEffortAdmission,
  countAnswer,
  countAnswers,
  MEMORY_MS,
  NO_ANSWERS,
  reservedAdmission,
} from "./admission.ts";

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

  it("counts rows: an answer of several counts them all", () => {
    expect(answeringRate(countAnswers(countAnswers(NO_ANSWERS, 1000, 16), 1010, 16), 1050)).toBe(320);
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
    // 20 rows ahead at 1000 rows/s: 20 ms of waiting.
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

describe("best-effort admission", () => {
  const alone = { waitShare: 0.5, flowInFlight: 0, flowShare: 1, reservedInFlight: 0 };

  it("admits while the work ahead takes less than its share of the deadline", () => {
    // 4 ahead at 1000/s: 4 ms, under half of 10 ms.
    expect(bestEffortAdmission(4, 1000, 10, 2, alone)).toEqual({ admit: true, waitMs: 4, shed: false });
  });

  it("sheds past that share while a request within a reservation would still get in", () => {
    const flooded = { ...alone, flowInFlight: 6 };
    expect(bestEffortAdmission(6, 1000, 10, 2, flooded)).toEqual({ admit: false, waitMs: 6, shed: true });
    expect(admission(6, 1000, 10, 2).admit).toBe(true);
  });

  it("is refused as overloaded, not shed, when not even a reservation's request would get in", () => {
    // 12 reserved rows ahead at 1000 rows/s: 12 ms, past the deadline.
    const flooded = { ...alone, flowInFlight: 6, reservedInFlight: 12 };
    expect(bestEffortAdmission(18, 1000, 10, 2, flooded)).toEqual({ admit: false, waitMs: 18, shed: false });
  });

  it("admits a reservation's request by the reserved rows ahead of it, whatever best-effort work waits", () => {
    expect(reservedAdmission(4, 1000, 10, 2)).toEqual({ admit: true, waitMs: 4 });
    expect(reservedAdmission(12, 1000, 10, 2).admit).toBe(false);
    // A flood of 50 best-effort rows in flight still sheds best-effort requests, not overloads them.
    expect(bestEffortAdmission(54, 1000, 10, 2, { ...alone, flowInFlight: 50, reservedInFlight: 4 }).shed).toBe(true);
  });

  it("admits a tenant under its weighted share of the room while another's flood fills it", () => {
    // Room: 1000/s x 5 ms = 5 requests. The flood holds 6; a tenant of weight 1 beside one of weight 3 may hold
    // a quarter of the room: 1.25 requests.
    const quiet = { waitShare: 0.5, flowInFlight: 1, flowShare: 0.25, reservedInFlight: 0 };
    expect(bestEffortAdmission(7, 1000, 10, 2, quiet).admit).toBe(true);
    expect(bestEffortAdmission(8, 1000, 10, 2, { ...quiet, flowInFlight: 2 }).admit).toBe(false);
    const flood = { waitShare: 0.5, flowInFlight: 6, flowShare: 0.75, reservedInFlight: 0 };
    expect(bestEffortAdmission(7, 1000, 10, 2, flood)).toMatchObject({ admit: false, shed: true });
  });

  it("admits up to a batch's worth whatever the wait, unless a reserved request is in flight", () => {
    expect(bestEffortAdmission(1, 10, 1, 2, alone).admit).toBe(true);
    // A flood's rows within the batch's worth would still be ahead of a reservation's: refused then.
    expect(bestEffortAdmission(8, 1000, 10, 16, { ...alone, flowInFlight: 7, reservedInFlight: 1 })).toMatchObject({
      admit: false,
      shed: true,
    });
  });
});
