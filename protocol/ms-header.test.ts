import { describe, expect, it } from "vitest";
import { BadRequest } from "./errors.ts";
import { msHeader } from "./ms-header.ts";

const NAME = "x-edgecascade-deadline-ms";

describe("msHeader", () => {
  it("absent: undefined", () => {
    expect(msHeader(NAME, undefined, { min: 0 })).toBeUndefined();
    expect(msHeader(NAME, null, { min: 0 })).toBeUndefined();
  });

  it.each([
    ["0", 0],
    ["250", 250],
    [" 12 ", 12],
    ["007", 7],
    ["3600000", 3_600_000],
  ])("%j: %i ms", (value, ms) => {
    expect(msHeader(NAME, value, { min: 0, max: 3_600_000 })).toBe(ms);
  });

  it.each([
    "",
    " ",
    "-1",
    "+5",
    "1.5",
    "1.",
    ".5",
    "1e3",
    "0x10",
    "Infinity",
    "NaN",
    "12ms",
    "1,5",
    "1 000",
    "3600001",
  ])("%j is a 400 naming the header and its bounds", (value) => {
    const read = () => msHeader(NAME, value, { min: 0, max: 3_600_000 });
    expect(read).toThrow(BadRequest);
    expect(read).toThrow(
      `x-edgecascade-deadline-ms must be a whole number of milliseconds, from 0 to 3600000, got ${JSON.stringify(value)}`,
    );
  });

  it("holds the minimum; without a maximum, up to 15 digits (every one an exact double)", () => {
    expect(() => msHeader(NAME, "0", { min: 1 })).toThrow("must be a whole number of milliseconds, 1 or more, got");
    expect(msHeader(NAME, "999999999999999", { min: 1 })).toBe(999_999_999_999_999);
    expect(() => msHeader(NAME, "1000000000000000", { min: 1 })).toThrow(BadRequest);
  });
});
