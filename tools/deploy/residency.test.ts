import { describe, expect, it } from "vitest";
import { poolsOutside, RESIDENCIES, regionalServicesRefusal, regionsOf, residencyOf } from "./residency.ts";

describe("data residency", () => {
  it("reads DATA_RESIDENCY, refusing a value it has no region for", () => {
    expect(residencyOf({})).toBeUndefined();
    expect(residencyOf({ DATA_RESIDENCY: "eu" })).toBe(RESIDENCIES.eu);
    expect(() => residencyOf({ DATA_RESIDENCY: "mars" })).toThrow(/DATA_RESIDENCY must be one of eu, got "mars"/);
  });

  it("names the pools outside the region, and those that do not say where they are", () => {
    const regions = regionsOf({
      REGIONS: [
        { name: "eu-central", url: "https://a", continent: "EU" },
        { name: "us-east", url: "https://b", continent: "NA" },
        { name: "somewhere", url: "https://c" },
      ],
    });
    expect(poolsOutside(regions, RESIDENCIES.eu!)).toEqual([
      "us-east (continent NA)",
      "somewhere (continent not given)",
    ]);
    expect(regionsOf({ REGIONS: '[{"name":"x","url":"https://x","continent":"EU"}]' })).toHaveLength(1);
  });

  it("says what is lost without Regional Services, and which plan it takes", () => {
    const text = regionalServicesRefusal("eu-only", RESIDENCIES.eu!, "eu.example.com", "403 not entitled");
    expect(text).toMatch(
      /^refusing to deploy eu-only: DATA_RESIDENCY=eu needs Regional Services \(region "eu"\) on eu\.example\.com/,
    );
    expect(text).toContain("decrypted, classified at the edge and cached in whichever Cloudflare location");
    expect(text).toContain("Data Localization Suite, an add-on to the Enterprise plan");
  });
});
