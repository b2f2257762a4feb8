import { describe, expect, it } from "vitest";
import { probeCommand } from "./probe-command.ts";

const URL = "http://127.0.0.1:8787";
const SERVED = ["breast-cancer", "digits"];

describe("probeCommand (npm start's banner)", () => {
  it("is the plain command on an open edge", () => {
    expect(probeCommand(URL, undefined, SERVED)).toBe(`npm run probe -- --url ${URL}`);
    expect(probeCommand(URL, "", ["wine"])).toBe(`npm run probe -- --url ${URL} --model wine`);
  });

  it("carries one of EDGE_API_KEYS: the first that may call digits, else a scoped key with its model", () => {
    expect(probeCommand(URL, "k1, k2", SERVED)).toBe(`npm run probe -- --url ${URL} --api-key k1`);
    const scoped = JSON.stringify([
      { key: "cancer-only", models: ["breast-cancer"] },
      { key: "digits-too", models: ["digits"] },
    ]);
    expect(probeCommand(URL, scoped, SERVED)).toBe(`npm run probe -- --url ${URL} --api-key digits-too`);
    const cancerOnly = JSON.stringify([{ key: "cancer-only", models: ["breast-cancer"] }]);
    expect(probeCommand(URL, cancerOnly, SERVED)).toBe(
      `npm run probe -- --url ${URL} --model breast-cancer --api-key cancer-only`,
    );
  });
});
