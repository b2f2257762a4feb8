import { describe, expect, it } from "vitest";
import { bearerToken } from "./bearer.ts";

describe("bearerToken", () => {
  it.each([
    ["Bearer k1", "k1"],
    ["bearer   k1  ", "k1"],
    ["BEARER k1", "k1"],
    ["  Bearer k1", "k1"],
    ["Bearer a.b-c_d~e+f/g==", "a.b-c_d~e+f/g=="],
  ])("%j -> %j", (authorization, token) => {
    expect(bearerToken(authorization)).toBe(token);
  });

  it.each([undefined, null, "", "Bearer", "Bearer ", "Bearerk1", "Bearer\tk1", "Basic k1", "Bearer a b", "k1"])(
    "%j: no token",
    (authorization) => {
      expect(bearerToken(authorization)).toBeUndefined();
    },
  );
});
