import { describe, expect, it } from "vitest";
import { NotFound } from "../../protocol/errors.ts";
import { checkModel } from "./model-check.ts";

const served = { modelName: "digits", servedVersion: "2" };

describe("checkModel", () => {
  it.each([
    ["digits", undefined],
    ["digits", "2"],
  ])("accepts model %j, version %j", (model, version) => {
    expect(() => checkModel(served, model, version)).not.toThrow();
  });

  it.each([
    ["digits-edge", undefined, 'unknown model "digits-edge"; this endpoint serves "digits"'],
    ["digits", "1", 'model "digits" has no version "1" here; the served version is "2"'],
    ["digits", "3", 'model "digits" has no version "3" here; the served version is "2"'],
  ])("refuses model %j, version %j with a 404", (model, version, message) => {
    expect(() => checkModel(served, model, version)).toThrow(NotFound);
    expect(() => checkModel(served, model, version)).toThrow(message);
  });
});
