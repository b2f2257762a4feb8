import { afterEach, describe, expect, it, vi } from "vitest";
import { RegionStatusStore } from "./store.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("RegionStatusStore", () => {
  it("reads a failing KV namespace as no report, logs it, and asks again only after the memo time", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    let lookups = 0;
    const failing = {
      get: () => {
        lookups++;
        return Promise.reject(new Error("KV unavailable"));
      },
    } as unknown as KVNamespace;
    const store = new RegionStatusStore(failing, 5000);
    expect(await store.read(10_000)).toBeNull();
    expect(await store.read(11_000)).toBeNull();
    expect(lookups).toBe(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/region status read failed: KV unavailable/);
    expect(await store.read(16_000)).toBeNull();
    expect(lookups).toBe(2);
  });

  it("answers from a fresh memo at once, without a promise", async () => {
    const report = { at: 10_000, regions: [] };
    const kv = { get: () => Promise.resolve(report) } as unknown as KVNamespace;
    const store = new RegionStatusStore(kv, 5000);
    const first = store.read(10_000);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(report);
    expect(store.read(12_000)).toBe(report);
    expect(store.read(15_000)).toBeInstanceOf(Promise);
  });
});
