import { describe, expect, it } from "vitest";
import { counted, metric } from "./exposition.ts";

const TEXT = [
  "# HELP x_total Requests.",
  "# TYPE x_total counter",
  'x_total{model="digits",outcome="success"} 3',
  'x_total{model="digits",outcome="error"} 1',
  'x_total{model="breast-cancer",outcome="success"} 5',
  "# HELP y_total Declared, never counted.",
  "# TYPE y_total counter",
  "# TYPE up gauge",
  "up 1",
].join("\n");

describe("metric", () => {
  it("sums the samples whose labels include the given ones", () => {
    expect(metric(TEXT, "x_total", { model: "digits" })).toBe(4);
    expect(metric(TEXT, "x_total", { model: "digits", outcome: "error" })).toBe(1);
    expect(metric(TEXT, "x_total")).toBe(9);
    expect(metric(TEXT, "up")).toBe(1);
  });

  it("throws for a series that is not there: a renamed series or label, or one never written", () => {
    expect(() => metric(TEXT, "x_totals")).toThrow("no series x_totals{} in the exposition");
    expect(() => metric(TEXT, "x_total", { modle: "digits" })).toThrow(
      'no series x_total{"modle":"digits"} in the exposition',
    );
    expect(() => metric(TEXT, "y_total")).toThrow("no series y_total{}");
  });
});

describe("counted", () => {
  it("reads a declared counter not yet counted as 0, and a counted one as its sum", () => {
    expect(counted(TEXT, "y_total", { model: "digits" })).toBe(0);
    expect(counted(TEXT, "x_total", { outcome: "success" })).toBe(8);
  });

  it("throws for a counter the text does not declare (a gauge is not one)", () => {
    expect(() => counted(TEXT, "z_total")).toThrow("no counter z_total in the exposition");
    expect(() => counted(TEXT, "up")).toThrow("no counter up in the exposition");
  });
});
