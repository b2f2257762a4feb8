import { describe, expect, it } from "vitest";
import { agreeingRows, formatAuditLabels, parseAuditLabels } from "./audit.ts";
import { BadRequest } from "./errors.ts";

describe("audit labels", () => {
  it("round-trip, one class index per row", () => {
    expect(formatAuditLabels([3, 0, 9])).toBe("3,0,9");
    expect(parseAuditLabels("3,0,9", 3, 10)).toEqual([3, 0, 9]);
    expect(parseAuditLabels(" 7 ", 1, 10)).toEqual([7]);
  });

  it("refuse a count that is not the rows', a class out of range, or anything not an index", () => {
    for (const [header, rows] of [
      ["3,4", 1],
      ["3", 2],
      ["10", 1],
      ["-1", 1],
      ["1.5", 1],
      ["", 1],
      ["a", 1],
    ] as const) {
      expect(() => parseAuditLabels(header, rows, 10), header).toThrow(BadRequest);
    }
  });

  it("count the rows whose top class is the edge's label", () => {
    const probs = [0.1, 0.9, 0.8, 0.2, 0.5, 0.5];
    expect(agreeingRows(probs, [1, 0, 0], 2)).toBe(3); // a tie goes to the first class, as argmax does
    expect(agreeingRows(probs, [0, 0, 1], 2)).toBe(1);
  });
});
