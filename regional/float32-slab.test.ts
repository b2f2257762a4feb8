import { describe, expect, it } from "vitest";
import { float32Slab } from "./float32-slab.ts";

describe("float32Slab", () => {
  it("hands out zero-filled arrays of the asked length that never overlap", () => {
    const allocate = float32Slab(64);
    const arrays = [3, 5, 16, 1, 16, 16, 7, 2].map((n) => allocate(n));
    arrays.forEach((a, i) => {
      expect(a.every((v) => v === 0)).toBe(true);
      a.fill(i + 1);
    });
    arrays.forEach((a, i) => {
      expect(a.length).toBe([3, 5, 16, 1, 16, 16, 7, 2][i]);
      expect(a.every((v) => v === i + 1)).toBe(true);
    });
  });

  it("cuts arrays from a shared buffer and starts a new one when it is full", () => {
    const allocate = float32Slab(64);
    const a = allocate(16);
    const b = allocate(16);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 64);
    allocate(16);
    allocate(16);
    const next = allocate(1);
    expect(next.buffer).not.toBe(a.buffer);
    expect(next.byteOffset).toBe(0);
  });

  it("gives an array of more than a quarter of a slab a buffer of its own", () => {
    const allocate = float32Slab(64);
    const own = allocate(17);
    expect(own.byteOffset).toBe(0);
    expect(own.buffer.byteLength).toBe(17 * 4);
    expect(allocate(16).buffer).not.toBe(own.buffer);
  });

  it("refuses a slab size that is not an integer of at least 4", () => {
    expect(() => float32Slab(3)).toThrow(/slabFloats/);
    expect(() => float32Slab(10.5)).toThrow(/slabFloats/);
  });
});
