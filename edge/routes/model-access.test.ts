import { describe, expect, it } from "vitest";
import { Forbidden, NotFound } from "../../protocol/errors.ts";
import { checkModelAccess } from "./model-access.ts";

const models = new Map([
  ["digits", { servedVersion: "2" }],
  ["breast-cancer", { servedVersion: "1" }],
]);
const served = { get: (name: string) => models.get(name), names: ["breast-cancer", "digits"] };
const onlyDigits = (name: string) => name === "digits";

describe("checkModelAccess", () => {
  it.each([
    ["digits", undefined],
    ["digits", "2"],
    ["breast-cancer", "1"],
  ])("accepts model %j, version %j", (model, version) => {
    expect(checkModelAccess(served, model, version)).toBe(models.get(model));
  });

  it.each([
    ["digits-edge", undefined, 'unknown model "digits-edge"; this endpoint serves "breast-cancer", "digits"'],
    ["digits", "1", 'model "digits" has no version "1" here; the served version is "2"'],
    ["digits", "3", 'model "digits" has no version "3" here; the served version is "2"'],
  ])("refuses model %j, version %j with a 404", (model, version, message) => {
    expect(() => checkModelAccess(served, model, version)).toThrow(NotFound);
    expect(() => checkModelAccess(served, model, version)).toThrow(message);
  });

  it("names only the models a scoped key may call, and refuses the others with a 403", () => {
    expect(checkModelAccess(served, "digits", undefined, onlyDigits)).toBe(models.get("digits"));
    expect(() => checkModelAccess(served, "nope", undefined, onlyDigits)).toThrow(
      new NotFound('unknown model "nope"; this endpoint serves "digits"'),
    );
    expect(() => checkModelAccess(served, "breast-cancer", undefined, onlyDigits)).toThrow(Forbidden);
    expect(() => checkModelAccess(served, "breast-cancer", undefined, onlyDigits)).toThrow(
      'this API key may not call model "breast-cancer"; it may call "digits"',
    );
  });
});
