import { describe, expect, it, vi } from "vitest";
import type { OnnxModel } from "./session.ts";
import { delayedVersions } from "./version-delay.ts";

function session(): OnnxModel & { runs: number; released: number } {
  const s = {
    runs: 0,
    released: 0,
    run: async (data: Float32Array) => {
      s.runs++;
      return data;
    },
    release: async () => {
      s.released++;
    },
  };
  return s;
}

describe("delayedVersions (--version-delay-ms)", () => {
  it("wraps nothing without delays, and only the named versions with them", () => {
    expect(delayedVersions([])).toBeUndefined();
    const wrap = delayedVersions([{ model: "digits", version: "2", ms: 20 }])!;
    const other = session();
    expect(wrap(other, { name: "digits", version: "1" })).toBe(other);
    expect(wrap(other, { name: "breast-cancer", version: "2" })).toBe(other);
    expect(wrap(other, { name: "digits", version: "2" })).not.toBe(other);
  });

  it("makes every run of the named version wait first, then run on its session; release passes through", async () => {
    vi.useFakeTimers();
    try {
      const inner = session();
      const slow = delayedVersions([{ model: "digits", version: "2", ms: 20 }])!(inner, {
        name: "digits",
        version: "2",
      });
      let done = false;
      const run = slow.run(Float32Array.of(1), 1).then((out) => {
        done = true;
        return out;
      });
      await vi.advanceTimersByTimeAsync(19);
      expect([done, inner.runs]).toEqual([false, 0]);
      await vi.advanceTimersByTimeAsync(1);
      expect(await run).toEqual(Float32Array.of(1));
      expect(inner.runs).toBe(1);
      await slow.release();
      expect(inner.released).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
