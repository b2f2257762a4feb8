import { afterEach, describe, expect, it, vi } from "vitest";
import { answerKey } from "../../protocol/cache-key.ts";
import { ResponseCache } from "./response-cache.ts";

const KEY = answerKey("digits", "1", new Float32Array([1, 2, 3, 4]));
const answer = { version: "1", probs: [0.25, 0.75] };

/** A colo cache whose every lookup fails, as the Cache API can (it is I/O). */
const failingCache = () =>
  ({
    match: () => Promise.reject(new Error("cache unavailable")),
    put: () => Promise.resolve(),
  }) as unknown as Cache;

/** A colo cache that keeps what is put, as the Cache API does within its max-age (enough for these tests). */
function memoryCache(): Cache {
  const bodies = new Map<string, string>();
  return {
    match: async (request: Request) => {
      const body = bodies.get(request.url);
      return body === undefined ? undefined : new Response(body);
    },
    put: async (request: Request, response: Response) => {
      bodies.set(request.url, await response.text());
    },
  } as unknown as Cache;
}

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

  it("copies a shared-cache hit into the isolate's tier, sized by its JSON text", async () => {
    const shared = memoryCache();
    await cacheWith(shared).put(KEY, answer, 1000); // another isolate of the colo
    const json = JSON.stringify({ ...answer, expiresAt: 61_000 });
    // Room for exactly this entry in L1 (its JSON text and key), so a wrong size would not be kept.
    const cache = new ResponseCache({ ttlS: 60, maxEntries: 10, maxBytes: json.length + KEY.local.length, shared });
    expect(await cache.get(KEY, 2000)).toEqual({ tier: "l2", answer: { ...answer, expiresAt: 61_000 } });
    expect(cache.entries).toBe(1);
    expect(await cache.get(KEY, 2000)).toEqual({ tier: "l1", answer: { ...answer, expiresAt: 61_000 } });
    expect(await cache.get(KEY, 61_000)).toEqual({ tier: "miss" });
  });

  it("answers an isolate's-tier hit at once, and leaves a miss to the shared tier", async () => {
    const shared = memoryCache();
    await cacheWith(shared).put(KEY, answer, 1000); // another isolate of the colo
    const cache = cacheWith(shared);
    expect(cache.local(KEY, 2000)).toBeUndefined();
    expect(await cache.shared(KEY, 2000)).toEqual({ tier: "l2", answer: { ...answer, expiresAt: 61_000 } });
    expect(cache.local(KEY, 2000)).toEqual({ ...answer, expiresAt: 61_000 });
  });

  it("counts the shared tier's writes as they begin, end and fail; none without a shared tier", async () => {
    const cache = cacheWith(memoryCache());
    const write = cache.put(KEY, answer, 1000);
    expect(cache.writes).toEqual({ started: 1, written: 0, failed: 0 });
    await write;
    expect(cache.writes).toEqual({ started: 1, written: 1, failed: 0 });
    const refusing = cacheWith({
      ...failingCache(),
      put: () => Promise.reject(new Error("quota")),
    } as unknown as Cache);
    await expect(refusing.put(KEY, answer, 1000)).rejects.toThrow("quota");
    expect(refusing.writes).toEqual({ started: 1, written: 0, failed: 1 });
    const alone = cacheWith(undefined);
    await alone.put(KEY, answer, 1000);
    expect(alone.writes).toEqual({ started: 0, written: 0, failed: 0 });
  });

  it("still answers from the isolate's tier in front of a failing shared cache", async () => {
    const cache = cacheWith(failingCache());
    await cache.put(KEY, answer, 1000);
    expect(await cache.get(KEY, 1000)).toEqual({ tier: "l1", answer: expect.objectContaining(answer) });
  });

  it("keeps an answer's predictions text in the isolate's tier only, counted in its size", async () => {
    const shared = memoryCache();
    const text = '[{"class":1,"label":"b","confidence":0.75,"scores":[0.25,0.75]}]';
    const json = JSON.stringify({ ...answer, expiresAt: 61_000 });
    const size = json.length + text.length + KEY.local.length;
    const roomy = new ResponseCache({ ttlS: 60, maxEntries: 10, maxBytes: size, shared });
    await roomy.put(KEY, { ...answer, predictionsJson: text }, 1000);
    expect(roomy.local(KEY, 2000)).toEqual({ ...answer, predictionsJson: text, expiresAt: 61_000 });
    // One byte short of the text's room: not kept in the isolate (written to the shared tier all the same).
    const tight = new ResponseCache({ ttlS: 60, maxEntries: 10, maxBytes: size - 1, shared: memoryCache() });
    await tight.put(KEY, { ...answer, predictionsJson: text }, 1000);
    expect(tight.local(KEY, 2000)).toBeUndefined();
    // The shared tier holds the version and probabilities alone; a hit from it has no text.
    const other = cacheWith(shared);
    expect(await other.get(KEY, 2000)).toEqual({ tier: "l2", answer: { ...answer, expiresAt: 61_000 } });
  });

  it("drops a predictions text found in the shared tier (none is written there; none is trusted)", async () => {
    const planted = JSON.stringify({ ...answer, expiresAt: 61_000, predictionsJson: "[1]" });
    const shared = { match: async () => new Response(planted), put: async () => {} } as unknown as Cache;
    expect(await cacheWith(shared).get(KEY, 2000)).toEqual({ tier: "l2", answer: { ...answer, expiresAt: 61_000 } });
  });
});
