import { describe, expect, it } from "vitest";
import { belowChanceProblem, chanceCheck, LabelError, resolveLabels } from "./labels.ts";

const names = { labels: ["benign", "malignant"], kind: "names" as const, source: "ZipMap (classlabels_strings)" };
const ints = { labels: ["0", "1"], kind: "integers" as const, source: "ZipMap (classlabels_int64s)" };

describe("resolveLabels", () => {
  it("takes the names the model carries, and refuses --labels that contradict them", () => {
    expect(resolveLabels({ classes: 2, model: names })).toEqual({
      labels: ["benign", "malignant"],
      from: "the model's ZipMap (classlabels_strings)",
    });
    expect(resolveLabels({ classes: 2, model: names, flag: ["benign", "malignant"] }).labels).toEqual([
      "benign",
      "malignant",
    ]);
    expect(() => resolveLabels({ classes: 2, model: names, flag: ["malignant", "benign"] })).toThrow(
      /--labels malignant,benign contradict the model: its output columns are benign, malignant .*the same names in another order/,
    );
    expect(() => resolveLabels({ classes: 2, model: names, flag: ["no", "yes"] })).toThrow(LabelError);
  });

  it("lets --labels name integer labels in column order; else the integers, the existing config's, or 0..C-1", () => {
    expect(resolveLabels({ classes: 2, model: ints, flag: ["malignant", "benign"] }).labels).toEqual([
      "malignant",
      "benign",
    ]);
    expect(resolveLabels({ classes: 2, model: { ...ints, labels: ["3", "7"] } }).labels).toEqual(["3", "7"]);
    expect(resolveLabels({ classes: 2, existing: ["a", "b"] }).labels).toEqual(["a", "b"]);
    expect(resolveLabels({ classes: 3 }).labels).toEqual(["0", "1", "2"]);
  });

  it("refuses counts that do not match the columns", () => {
    expect(() => resolveLabels({ classes: 3, flag: ["a", "b"] })).toThrow(
      "--labels names 2 classes; the model outputs 3",
    );
    expect(() => resolveLabels({ classes: 3, model: names })).toThrow(
      "lists 2 classes but its probabilities have 3 columns",
    );
  });
});

describe("chanceCheck and belowChanceProblem", () => {
  it("finds swapped columns and says what they would score", () => {
    // Labels 0,0,0,1,1 predicted 1,1,1,0,1: swapped except one row.
    const check = chanceCheck([1, 1, 1, 0, 1], [0, 0, 0, 1, 1], 2);
    expect(check).toEqual({ accuracy: 0.2, chance: 0.5, bestColumns: [1, 0], bestAccuracy: 0.8 });
    expect(belowChanceProblem(check, ["benign", "malignant"], "m")).toMatch(
      /^m: held-out accuracy 20\.00% is below chance \(50\.00% for 2 classes\).*Read as malignant, benign, the columns would score 80\.00%/,
    );
  });

  it("says nothing at or above chance", () => {
    expect(belowChanceProblem(chanceCheck([0, 1, 1, 0], [0, 1, 0, 1], 2), ["a", "b"], "m")).toBeUndefined();
  });
});
