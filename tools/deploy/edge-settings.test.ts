import { describe, expect, it } from "vitest";
import { edgeSettingsProblem } from "./edge-settings.ts";

describe("edgeSettingsProblem", () => {
  it("names a var the Worker would refuse, and where it comes from", () => {
    expect(edgeSettingsProblem("staging", { SLO_BUDGET_MS: "ten" }, {})).toBe(
      `staging's Worker would refuse its configuration: SLO_BUDGET_MS: must be a number >= 1, got "ten" (wrangler.toml's [env.staging.vars], or --secrets-file)`,
    );
    expect(edgeSettingsProblem("production", { REGIONS: [{ name: "us" }] }, {})).toMatch(/^production's .*REGIONS/);
  });

  it("reads a secrets file's value over the var, as the Worker's environment does", () => {
    expect(edgeSettingsProblem("staging", { CACHE_TTL_S: 300 }, { CACHE_TTL_S: "-1" })).toMatch(/CACHE_TTL_S/);
    expect(edgeSettingsProblem("staging", { CACHE_TTL_S: "-1" }, { CACHE_TTL_S: "300" })).toBeUndefined();
  });

  it("takes wrangler.toml's JSON values and leaves vars the Worker does not read alone", () => {
    const regions = [{ name: "us-east", url: "https://us-east-pool.example.com", latitude: 39, longitude: -77 }];
    expect(edgeSettingsProblem("eu-only", { REGIONS: regions, DATA_RESIDENCY: "eu", SLO_BUDGET_MS: 10 }, {})).toBe(
      undefined,
    );
  });
});
