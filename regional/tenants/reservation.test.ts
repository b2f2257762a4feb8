import { describe, expect, it } from "vitest";
import { burstRows } from "./reservation.ts";

describe("a reservation's bucket of rows", () => {
  it("holds a quarter second of the reservation, and at least one full request", () => {
    expect(burstRows(4000, 64)).toBe(1000);
    expect(burstRows(100, 64)).toBe(64);
  });
});
