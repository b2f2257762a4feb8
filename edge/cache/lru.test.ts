import { describe, expect, it } from "vitest";
import { Lru } from "./lru.ts";

const FOREVER = Number.MAX_SAFE_INTEGER;

describe("Lru", () => {
  it("evicts the least recently used entry past maxEntries", () => {
    const lru = new Lru<string>({ maxEntries: 2, maxBytes: 1000 });
    lru.set("a", "A", 1, FOREVER);
    lru.set("b", "B", 1, FOREVER);
    expect(lru.get("a", 0)).toBe("A"); // a is now the most recent
    lru.set("c", "C", 1, FOREVER);
    expect(lru.get("b", 0)).toBeUndefined();
    expect(lru.get("a", 0)).toBe("A");
    expect(lru.get("c", 0)).toBe("C");
    expect(lru.size).toBe(2);
  });

  it("evicts until the bytes fit", () => {
    const lru = new Lru<number>({ maxEntries: 100, maxBytes: 10 });
    lru.set("a", 1, 4, FOREVER);
    lru.set("b", 2, 4, FOREVER);
    lru.set("c", 3, 2, FOREVER);
    expect(lru.get("a", 0)).toBe(1);
    lru.set("d", 4, 6, FOREVER); // 16 bytes: b (now least recent) and c go
    expect(lru.get("b", 0)).toBeUndefined();
    expect(lru.get("c", 0)).toBeUndefined();
    expect(lru.get("a", 0)).toBe(1);
    expect(lru.get("d", 0)).toBe(4);
    expect(lru.bytes).toBe(10);
  });

  it("does not store an entry bigger than the whole budget, nor anything when disabled", () => {
    const lru = new Lru<number>({ maxEntries: 100, maxBytes: 10 });
    lru.set("a", 1, 4, FOREVER);
    lru.set("big", 2, 11, FOREVER);
    expect(lru.get("big", 0)).toBeUndefined();
    expect(lru.get("a", 0)).toBe(1);
    const off = new Lru<number>({ maxEntries: 0, maxBytes: 10 });
    off.set("a", 1, 1, FOREVER);
    expect(off.size).toBe(0);
  });

  it("replaces a key and keeps the byte count right", () => {
    const lru = new Lru<number>({ maxEntries: 10, maxBytes: 100 });
    lru.set("a", 1, 40, FOREVER);
    lru.set("a", 2, 10, FOREVER);
    expect(lru.bytes).toBe(10);
    expect(lru.get("a", 0)).toBe(2);
    lru.delete("a");
    expect(lru.bytes).toBe(0);
    expect(lru.size).toBe(0);
  });

  it("treats an expired entry as missing and frees it", () => {
    const lru = new Lru<number>({ maxEntries: 10, maxBytes: 100 });
    lru.set("a", 1, 5, 1000);
    expect(lru.get("a", 999)).toBe(1);
    expect(lru.get("a", 1000)).toBeUndefined();
    expect(lru.size).toBe(0);
    expect(lru.bytes).toBe(0);
  });

  it.each([
    { maxEntries: -1, maxBytes: 1 },
    { maxEntries: 1, maxBytes: 1.5 },
  ])("refuses %j", (options) => {
    expect(() => new Lru(options)).toThrow(/must be a non-negative integer/);
  });
});
