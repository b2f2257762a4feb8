import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { discardBody } from "./refused-body.ts";

const LIMITS = { maxBytes: 100, quietMs: 1000, maxMs: 5000 };

/** A body, and what `discardBody` said of it (undefined: not yet). */
function discarding() {
  const body = new PassThrough();
  const result: { ended?: boolean } = {};
  discardBody(body, LIMITS, (ended) => {
    expect(result.ended).toBeUndefined();
    result.ended = ended;
  });
  return { body, result };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("discardBody", () => {
  it("reads a body to its end, however long it takes while bytes keep coming", async () => {
    const { body, result } = discarding();
    for (let i = 0; i < 4; i++) {
      body.write(Buffer.alloc(20));
      await vi.advanceTimersByTimeAsync(900);
    }
    expect(result.ended).toBeUndefined();
    body.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(result.ended).toBe(true);
  });

  it("gives up past maxBytes", async () => {
    const { body, result } = discarding();
    body.write(Buffer.alloc(100));
    await vi.advanceTimersByTimeAsync(0);
    expect(result.ended).toBeUndefined();
    body.write(Buffer.alloc(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(result.ended).toBe(false);
  });

  it("gives up after quietMs without a byte, and after maxMs in all", async () => {
    const quiet = discarding();
    await vi.advanceTimersByTimeAsync(999);
    expect(quiet.result.ended).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(quiet.result.ended).toBe(false);

    const trickle = discarding();
    for (let t = 0; t < 4900; t += 700) {
      trickle.body.write(Buffer.alloc(1));
      await vi.advanceTimersByTimeAsync(700);
    }
    expect(trickle.result.ended).toBeUndefined();
    trickle.body.write(Buffer.alloc(1));
    await vi.advanceTimersByTimeAsync(100);
    expect(trickle.result.ended).toBe(false);
  });

  it("says false at once for a body already gone, true for one already ended", async () => {
    const gone = new PassThrough();
    gone.destroy();
    const said: boolean[] = [];
    discardBody(gone, LIMITS, (ended) => said.push(ended));
    const ended = new PassThrough();
    ended.end();
    ended.resume();
    await vi.advanceTimersByTimeAsync(0);
    discardBody(ended, LIMITS, (e) => said.push(e));
    expect(said).toEqual([false, true]);
  });

  it("says false when the body fails", async () => {
    const { body, result } = discarding();
    body.destroy(new Error("reset"));
    await vi.advanceTimersByTimeAsync(0);
    expect(result.ended).toBe(false);
  });
});
