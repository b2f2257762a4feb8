import { describe, expect, it } from "vitest";
import { priorRoundTripMs } from "./prior.ts";
import type { Region } from "./region.ts";

const EU: Region = { name: "eu", url: "http://eu", latitude: 50.11, longitude: 8.68, colos: ["FRA"] };
const US: Region = { name: "us", url: "http://us", latitude: 39.04, longitude: -77.49 };

describe("priorRoundTripMs", () => {
  it("is the floor for a region next to the colo", () => {
    expect(priorRoundTripMs({ latitude: 50.11, longitude: 8.68 }, EU)).toBe(2);
  });

  it("grows with the great-circle distance: Frankfurt to Ashburn is about 90 ms", () => {
    const ms = priorRoundTripMs({ latitude: 50.11, longitude: 8.68 }, US)!;
    expect(ms).toBeGreaterThan(85);
    expect(ms).toBeLessThan(95);
  });

  it("takes a colo the region lists as next door when the request has no coordinates", () => {
    expect(priorRoundTripMs({ colo: "FRA" }, EU)).toBe(2);
    expect(priorRoundTripMs({ colo: "FRA" }, US)).toBeUndefined();
  });

  it("is unknown without coordinates or a listed colo", () => {
    expect(priorRoundTripMs({}, EU)).toBeUndefined();
    expect(priorRoundTripMs(undefined, EU)).toBeUndefined();
  });
});
