import { describe, expect, it } from "vitest";
import { parseLabelledCsv, splitCsvLine } from "./csv.ts";

describe("splitCsvLine", () => {
  it.each([
    ["1,2,3", ["1", "2", "3"]],
    [" 1 , 2 ,3 ", ["1", "2", "3"]],
    ['"mean radius","a, b",x', ["mean radius", "a, b", "x"]],
    ['"say ""hi""",2', ['say "hi"', "2"]],
    ["1,,3", ["1", "", "3"]],
  ])("%j", (line, cells) => {
    expect(splitCsvLine(line)).toEqual(cells);
  });
});

describe("parseLabelledCsv", () => {
  const expect3 = { width: 3, classes: 2, source: "d.csv" };

  it("reads features and labels, with an optional header", () => {
    const parsed = parseLabelledCsv("a,b,c,label\n1,2,3,0\r\n\n-1.5,2e-3,+4,1\n", expect3);
    expect(parsed.header).toEqual(["a", "b", "c"]);
    expect(Array.from(parsed.features)).toEqual([1, 2, 3, -1.5, Math.fround(2e-3), 4]);
    expect(parsed.labels).toEqual([0, 1]);
    expect(parseLabelledCsv("1,2,3,1\n", expect3)).toMatchObject({ labels: [1], width: 3 });
    expect(parseLabelledCsv("1,2,3,1\n", expect3).header).toBeUndefined();
  });

  it("accepts class names for labels when they are given", () => {
    const parsed = parseLabelledCsv("1,2,3,benign\n1,2,3,0\n", { ...expect3, labels: ["benign", "malignant"] });
    expect(parsed.labels).toEqual([0, 0]);
  });

  it.each([
    [
      "1,2,3\n",
      "d.csv line 1 has 3 values; the model takes 3 features, so each line needs 4 (features, then the label)",
    ],
    ["a,b,c,d,e\n1,2,3,0\n", "d.csv line 1 (header) has 5 columns"],
    ["1,2,3,0\n1,x,3,0\n", 'd.csv line 2, column 2: "x" is not a number that fits float32'],
    ["1,1e39,3,0\n", 'd.csv line 1, column 2: "1e39" is not a number that fits float32'],
    ["1,NaN,3,0\n", 'column 2: "NaN" is not a number'],
    ["1,2,3,2\n", 'd.csv line 1: label "2" is not a class of the model; labels are class indices 0 to 1'],
    ["1,2,3,-1\n", 'label "-1" is not a class'],
    ["1,2,3,0.5\n", 'label "0.5" is not a class'],
    ["a,b,c,d\n\n", "d.csv has no data rows"],
  ])("refuses %j", (text, message) => {
    expect(() => parseLabelledCsv(text, expect3)).toThrow(message);
  });
});
