import { describe, expect, it } from "vitest";
import { presentedKey } from "./api-key.ts";

describe("presentedKey", () => {
  it.each([
    ["Bearer k1", undefined, "k1"],
    ["bearer   k1  ", undefined, "k1"],
    ["Basic k1", undefined, undefined],
    ["Bearer", undefined, undefined],
    ["Bearer a b", undefined, undefined],
    [undefined, " k2 ", "k2"],
    [undefined, "", undefined],
    ["Bearer k1", "k2", "k1"],
    [undefined, undefined, undefined],
  ])("authorization %j, x-api-key %j -> %j", (authorization, header, key) => {
    expect(presentedKey(authorization, header)).toBe(key);
  });
});
