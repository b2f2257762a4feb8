import { describe, expect, it } from "vitest";
import { hash32, ownerSlot } from "./owner.ts";

const names = Array.from(
  { length: 1000 },
  (_, i) => `${i % 2 ? "breast-cancer" : "digits"}-${String(i).padStart(4, "0")}`,
);

describe("ownerSlot", () => {
  it("is the same for a name whoever asks, and within the slots", () => {
    for (const name of names.slice(0, 50)) {
      expect(ownerSlot(name, 4)).toBe(ownerSlot(name, 4));
      expect(ownerSlot(name, 4)).toBeGreaterThanOrEqual(0);
      expect(ownerSlot(name, 4)).toBeLessThan(4);
    }
    expect(ownerSlot("digits", 1)).toBe(0);
  });

  it.each([2, 3, 4, 8])(
    "spreads a thousand models evenly over %i workers (each within 25%% of its share)",
    (workers) => {
      const counts = Array.from({ length: workers }, () => 0);
      for (const name of names) counts[ownerSlot(name, workers)]!++;
      const share = names.length / workers;
      for (const count of counts) expect(Math.abs(count - share)).toBeLessThan(share / 4);
    },
  );

  it("moves only the models of a slot that is added (rendezvous hashing)", () => {
    const moved = names.filter((name) => ownerSlot(name, 4) !== ownerSlot(name, 5));
    expect(moved.every((name) => ownerSlot(name, 5) === 4)).toBe(true);
  });
});

describe("hash32", () => {
  it("tells apart names that differ in one character", () => {
    expect(new Set(names.map(hash32)).size).toBe(names.length);
  });
});
