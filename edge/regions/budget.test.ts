import { describe, expect, it } from "vitest";
import { BadRequest } from "../../protocol/errors.ts";
import { requestBudgetMs } from "./budget.ts";

const options = { defaultMs: 10, maxMs: 1000 };

describe("requestBudgetMs", () => {
  it.each([
    [undefined, 10],
    [null, 10],
    ["50", 50],
    [" 25 ", 25],
    ["1000", 1000],
    ["60000", 1000],
  ])("header %j: %s ms", (header, budget) => {
    expect(requestBudgetMs(header, options)).toBe(budget);
  });

  it.each(["", "0", "-5", "2.5", "0x10", "1e3", "abc", "Infinity", "NaN"])(
    "refuses %j with a 400 naming the header",
    (header) => {
      expect(() => requestBudgetMs(header, options)).toThrow(BadRequest);
      expect(() => requestBudgetMs(header, options)).toThrow(/^x-edgecascade-budget-ms must be a whole number/);
    },
  );
});
