import { describe, expect, it } from "vitest";
import { mayCall, parseTenantKeys } from "./keys.ts";

const SERVED = ["digits", "breast-cancer"];

describe("parseTenantKeys", () => {
  it("reads a comma-separated list as keys for every model", () => {
    expect(parseTenantKeys(" k1, k2 ,", SERVED)).toEqual([
      { key: "k1", models: "*" },
      { key: "k2", models: "*" },
    ]);
    expect(parseTenantKeys(undefined, SERVED)).toEqual([]);
    expect(parseTenantKeys("  ", SERVED)).toEqual([]);
  });

  it("reads scoped keys with a tenant and a rate limit of their own", () => {
    const keys = parseTenantKeys(
      JSON.stringify([
        { key: "acme-1", tenant: "acme", models: ["digits"], rateLimit: { requests: 100, periodS: 60 } },
        { key: "ops", models: "*" },
      ]),
      SERVED,
    );
    expect(keys).toEqual([
      { key: "acme-1", tenant: "acme", models: new Set(["digits"]), rateLimit: { requests: 100, periodS: 60 } },
      { key: "ops", models: "*" },
    ]);
    expect(mayCall(keys[0]!.models, "digits")).toBe(true);
    expect(mayCall(keys[0]!.models, "breast-cancer")).toBe(false);
    expect(mayCall(keys[1]!.models, "breast-cancer")).toBe(true);
  });

  it.each([
    ["[", "API_KEYS: invalid JSON"],
    ['{"key":"a"}', "API_KEYS: must be a JSON array of keys"],
    [
      '[{"key":"a","models":["digit"]}]',
      'API_KEYS[0].models: unknown model "digit"; this Worker serves "digits", "breast-cancer"',
    ],
    ['[{"key":"a"},{"key":"b","models":"all"}]', 'API_KEYS: "[1].models" must be ("*" | Array), got string'],
    ['[{"key":"a","rateLimit":{"requests":0,"periodS":60}}]', '"[0].rateLimit.requests" must be at least 1'],
    ['[{"key":"a","rateLimit":{"requests":5}}]', '"[0].rateLimit.periodS" is required'],
    ['[{"key":"a b"}]', '"[0].key" must be 1-256 printable characters without spaces'],
    ['[{"key":"a","tenant":"a/b"}]', '"[0].tenant" must be 1-64 letters'],
    ['[{"key":"a","scope":"x"}]', 'unknown field "[0].scope"'],
    ['[{"key":"a"},{"key":"a"}]', "API_KEYS[1]: the same key is listed twice"],
    ["k1,k1", "API_KEYS[1]: the same key is listed twice"],
  ])("refuses %s, naming the field", (raw, message) => {
    expect(() => parseTenantKeys(raw, SERVED)).toThrow(message);
  });
});
