import { describe, expect, it } from "vitest";
import { LOCAL_REGIONS } from "../stack/local-regions.ts";
import { CLIENT_LOCATIONS, oneWayDelayMs } from "./distance.ts";

const at = (name: string) => CLIENT_LOCATIONS.find((l) => l.name === name)!;
const region = (name: string) => LOCAL_REGIONS.find((r) => r.name === name)!;

describe("oneWayDelayMs", () => {
  it("is the floor for the same place", () => {
    expect(oneWayDelayMs(at("frankfurt"), region("eu"))).toBe(1);
  });

  it("grows with great-circle distance at 150 km per ms", () => {
    expect(oneWayDelayMs(at("new-york"), region("us"))).toBe(3.3); // 340 km
    expect(oneWayDelayMs(at("frankfurt"), region("us"))).toBe(44.7); // 6,550 km
    expect(oneWayDelayMs(at("sydney"), region("ap"))).toBe(53.2); // 7,830 km
  });

  it("leaves the far locations beyond a 10 ms budget from every region", () => {
    for (const place of ["sao-paulo", "sydney"]) {
      for (const r of LOCAL_REGIONS) expect(2 * oneWayDelayMs(at(place), r)).toBeGreaterThan(10);
    }
  });
});
