import { describe, expect, it } from "vitest";
import { MemoryCache } from "./memory-cache.ts";

const URL_A = "https://edgecascade.internal/answers/a";

describe("MemoryCache", () => {
  it("gives back what was put, body and headers", async () => {
    const cache = new MemoryCache();
    await cache.put(
      new Request(URL_A),
      new Response('{"v":1}', { headers: { "content-type": "application/json", "cache-control": "max-age=300" } }),
    );
    const hit = await cache.match(new Request(URL_A));
    expect(await hit?.json()).toEqual({ v: 1 });
    expect(hit?.headers.get("content-type")).toBe("application/json");
    expect(await cache.match(`${URL_A}-other`)).toBeUndefined();
  });

  it("stores nothing without a max-age, and nothing past it", async () => {
    const cache = new MemoryCache();
    await cache.put(URL_A, new Response("x"));
    expect(await cache.match(URL_A)).toBeUndefined();
    await cache.put(URL_A, new Response("x", { headers: { "cache-control": "max-age=0" } }));
    expect(await cache.match(URL_A)).toBeUndefined();
  });
});
