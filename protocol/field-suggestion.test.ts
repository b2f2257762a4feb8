import { describe, expect, it } from "vitest";
import { nearMissMessage, suggestedField } from "./field-suggestion.ts";

const FIELDS = ["model", "inputs", "version", "id", "parameters"];

describe("suggestedField", () => {
  it("names the field a typo or another protocol's name meant", () => {
    expect(suggestedField("input", FIELDS)).toBe("inputs");
    expect(suggestedField("Inputs", FIELDS)).toBe("inputs");
    expect(suggestedField("modle", FIELDS)).toBe("model");
    expect(suggestedField("instances", FIELDS, { instances: "inputs" })).toBe("inputs");
  });

  it("says nothing for a field that is not near any", () => {
    expect(suggestedField("extra", FIELDS)).toBeUndefined();
    expect(suggestedField("temperature", FIELDS)).toBeUndefined();
    // Two edits from "id" but only two characters long: anything is two edits from it.
    expect(suggestedField("xy", FIELDS)).toBeUndefined();
  });
});

describe("nearMissMessage", () => {
  it("names the first unknown field that looks like a slip", () => {
    expect(nearMissMessage({ model: "m", input: [] }, new Set(FIELDS))).toBe(
      'unknown field "input"; did you mean "inputs"?',
    );
    expect(nearMissMessage({ model: "m", inputs: [] }, new Set(FIELDS))).toBeUndefined();
    expect(nearMissMessage({ model: "m", extra: 1 }, new Set(FIELDS))).toBeUndefined();
  });
});
