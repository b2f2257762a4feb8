import { describe, expect, it } from "vitest";
import { preciseTimer, startPreciseTimers } from "../../scripts/validate/precise-timer.ts";

/** Arm a timer `inMs` from now; resolves with the time it fired and the time it was due. */
function fireIn(inMs: number, fired: string[], name: string): Promise<{ due: number; at: number }> {
  return new Promise((resolve) => {
    const due = performance.now() + inMs;
    const timer = preciseTimer(() => {
      fired.push(name);
      resolve({ due, at: performance.now() });
    });
    timer.at(due);
  });
}

describe("preciseTimer", () => {
  it("never fires before its time, and timers set out of order fire in the order they are due", async () => {
    await startPreciseTimers();
    const fired: string[] = [];
    const runs = await Promise.all([fireIn(30, fired, "c"), fireIn(5, fired, "a"), fireIn(15, fired, "b")]);
    expect(fired).toEqual(["a", "b", "c"]);
    for (const { due, at } of runs) expect(at).toBeGreaterThanOrEqual(due);
  });

  it("fires a time already past at once, and `at` replaces the earlier setting (fires once)", async () => {
    let calls = 0;
    const done = new Promise<void>((resolve) => {
      const timer = preciseTimer(() => {
        calls++;
        resolve();
      });
      timer.at(performance.now() + 60_000);
      timer.at(performance.now() - 1);
    });
    await done;
    await fireIn(20, [], "after");
    expect(calls).toBe(1);
  });

  it("does not fire once cancelled", async () => {
    let calls = 0;
    const timer = preciseTimer(() => calls++);
    timer.at(performance.now() + 5);
    timer.cancel();
    // A later timer on the same helper thread has fired: the cancelled one, due before it, would have too.
    await fireIn(25, [], "later");
    expect(calls).toBe(0);
  });
});
