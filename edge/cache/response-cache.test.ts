import { afterEach, describe, expect, it, vi } from "vitest";
import { ResponseCache } from "./response-cache.ts";

const KEY = "a".repeat(64);
const answer = { version: "1", probs: [0.25, 0.75] };

/** A colo cache whose every lookup fails, as the Cache API can (it is I/O). */
const failingCache = () =>
  ({
    match: () => Promise.reject(new Error("cache unavailable")),
    put: () => Promise.resolve(),
  }) as unknown as Cache;

const cacheWith = (shared: Cache | undefined, maxEntries = 10) =>
  new ResponseCache({ ttlS: 60, maxEntries, maxBytes: 1 << 20, shared });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("ResponseCache", () => {
  it("treats a failing shared-cache lookup as a miss and logs it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const cache = cacheWith(failingCache());
    expect(await cache.get(KEY, 1000)).toEqual({ tier: "miss" });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/cache lookup failed: cache unavailable/);
  });

  it("still answers from the isolate's tier in front of a failing shared cache", async () => {
    const cache = cacheWith(failingCache());
    await cache.put(KEY, answer, 1000);
    expect(await cache.get(KEY, 1000)).toEqual({ tier: "l1", answer: expect.objectContaining(answer) });
  });
});
