import { describe, expect, it } from "vitest";
import { ANONYMOUS, anonymousCaller, clientIds, identifyCaller, presentedKey } from "./api-key.ts";

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

describe("clientIds", () => {
  it("names each key's client by the first 16 hex digits of its SHA-256", async () => {
    // sha256("k1") = 6ab9f1eb8f7d3388..., sha256("second-key") = f397f260a275cc4d... (from `sha256sum`).
    const ids = await clientIds(new Set(["k1", "second-key"]));
    expect([...ids]).toEqual([
      ["k1", "key:6ab9f1eb8f7d3388"],
      ["second-key", "key:f397f260a275cc4d"],
    ]);
  });
});

describe("anonymousCaller", () => {
  it("is identifyCaller's answer without keys: the client address, tenant anonymous", async () => {
    for (const ip of ["203.0.113.9", null]) {
      const caller = anonymousCaller(ip);
      expect(caller).toEqual({ client: `ip:${ip ?? "unknown"}`, tenant: ANONYMOUS });
      expect(await identifyCaller([], { authorization: "Bearer x", apiKey: "y", connectingIp: ip })).toEqual(caller);
    }
  });
});
