import { describe, expect, it } from "vitest";
import { distanceKm, regionOrder } from "./order.ts";
import type { Region } from "./region.ts";

const us: Region = {
  name: "us",
  url: "http://us",
  latitude: 39.04,
  longitude: -77.49,
  continent: "NA",
  colos: ["IAD"],
};
const eu: Region = { name: "eu", url: "http://eu", latitude: 50.11, longitude: 8.68, continent: "EU", colos: ["FRA"] };
const ap: Region = {
  name: "ap",
  url: "http://ap",
  latitude: 35.68,
  longitude: 139.69,
  continent: "AS",
  colos: ["NRT"],
};
const regions = [us, eu, ap];
const names = (rs: Region[]) => rs.map((r) => r.name);

describe("distanceKm", () => {
  it("matches known great-circle distances", () => {
    // Washington Dulles to Frankfurt is about 6,500 km; a point to itself is 0.
    expect(distanceKm(us, eu)).toBeGreaterThan(6400);
    expect(distanceKm(us, eu)).toBeLessThan(6600);
    expect(distanceKm(ap, ap)).toBe(0);
    // Antipodes: half the circumference.
    expect(distanceKm({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 180 })).toBeCloseTo(Math.PI * 6371, 0);
  });
});

describe("regionOrder", () => {
  it.each([
    ["Paris", { latitude: 48.85, longitude: 2.35 }, ["eu", "us", "ap"]],
    ["San Francisco", { latitude: 37.77, longitude: -122.42 }, ["us", "ap", "eu"]],
    ["Sydney", { latitude: -33.87, longitude: 151.21 }, ["ap", "us", "eu"]],
    ["Singapore", { latitude: 1.35, longitude: 103.82 }, ["ap", "eu", "us"]],
  ])("orders by distance from %s", (_, location, expected) => {
    expect(names(regionOrder(regions, location, {}))).toEqual(expected);
  });

  it("falls back to the continent, then the colo, then the configured order", () => {
    expect(names(regionOrder(regions, { continent: "EU", colo: "NRT" }, {}))).toEqual(["eu", "ap", "us"]);
    expect(names(regionOrder(regions, { continent: "AF", colo: "NRT" }, {}))).toEqual(["ap", "us", "eu"]);
    expect(names(regionOrder(regions, {}, {}))).toEqual(["us", "eu", "ap"]);
  });

  it("puts unhealthy regions last, nearest first among them", () => {
    const paris = { latitude: 48.85, longitude: 2.35 };
    expect(names(regionOrder(regions, paris, { eu: "unhealthy" }))).toEqual(["us", "ap", "eu"]);
    expect(names(regionOrder(regions, paris, { eu: "unhealthy", us: "unhealthy" }))).toEqual(["ap", "eu", "us"]);
    expect(names(regionOrder(regions, paris, { eu: "healthy" }))).toEqual(["eu", "us", "ap"]);
  });

  it("does not change its input and handles no regions", () => {
    const input = [ap, us];
    regionOrder(input, { latitude: 39, longitude: -77 }, {});
    expect(names(input)).toEqual(["ap", "us"]);
    expect(regionOrder([], {}, {})).toEqual([]);
  });
});
