import { describe, expect, it } from "vitest";
import { loopbackRegionBindings, regionBindingName } from "./region-bindings.ts";

const region = (name: string, url: string, extra: object = {}) => ({ name, url, latitude: 1, longitude: 2, ...extra });

describe("loopbackRegionBindings", () => {
  it("binds each loopback region to an external service at its address, in a JSON var", () => {
    const input = JSON.stringify([region("us", "http://127.0.0.1:9001"), region("eu-west", "http://localhost:9002/")]);
    const { regions, serviceBindings } = loopbackRegionBindings(input);
    expect(JSON.parse(regions as string)).toEqual([
      region("us", "http://127.0.0.1:9001", { binding: "REGION_US" }),
      region("eu-west", "http://localhost:9002/", { binding: "REGION_EU_WEST" }),
    ]);
    expect(serviceBindings).toEqual({
      REGION_US: { external: { address: "127.0.0.1:9001", http: {} } },
      REGION_EU_WEST: { external: { address: "127.0.0.1:9002", http: {} } },
    });
  });

  it("takes wrangler.toml's array as an array, and leaves other regions and given bindings alone", () => {
    const input = [
      region("far", "https://pool.example.com"),
      region("tls", "https://127.0.0.1:9001"),
      region("own", "http://127.0.0.1:9003", { binding: "MINE" }),
      region("path", "http://127.0.0.1:9004/prefix"),
    ];
    expect(loopbackRegionBindings(input)).toEqual({ regions: input, serviceBindings: {} });
  });

  it("passes REGIONS that do not parse through for the Worker to refuse", () => {
    expect(loopbackRegionBindings("[")).toEqual({ regions: "[", serviceBindings: {} });
    expect(loopbackRegionBindings("{}")).toEqual({ regions: "{}", serviceBindings: {} });
    expect(loopbackRegionBindings(undefined)).toEqual({ regions: undefined, serviceBindings: {} });
  });

  it("names bindings after the region", () => {
    expect(regionBindingName("ap-northeast")).toBe("REGION_AP_NORTHEAST");
  });
});
