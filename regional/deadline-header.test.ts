import { describe, expect, it } from "vitest";
import { BadRequest } from "../protocol/errors.ts";
import { deadlineAt, deadlineMs } from "./deadline-header.ts";

describe("deadlineMs", () => {
  it("no header: no deadline", () => {
    expect(deadlineMs(undefined)).toBeUndefined();
    expect(deadlineAt(undefined, 5)).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([
    ["250", 1_000 + 250_000],
    ["0", 1_000],
    [" 12 ", 1_000 + 12_000],
    ["3600000", 1_000 + 3_600_000_000],
  ])("%j ms from receipt", (value, expected) => {
    expect(deadlineAt(deadlineMs(value), 1_000)).toBe(expected);
  });

  it.each(["", "-1", "abc", "1.5", "1e3", "0x10", "Infinity", "NaN", "3600001", "1.", ".5", "12ms", "1,5"])(
    "%j is a 400 naming the header",
    (value) => {
      expect(() => deadlineMs(value)).toThrow(BadRequest);
      expect(() => deadlineMs(value)).toThrow(/^x-edgecascade-deadline-ms must be a whole number of milliseconds/);
    },
  );
});
