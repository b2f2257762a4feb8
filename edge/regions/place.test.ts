import { describe, expect, it } from "vitest";
import { placeOf } from "./place.ts";
import { requestLocation } from "./request-location.ts";

describe("placeOf", () => {
  it("is the colo, else the coordinates to a tenth of a degree, else unknown", () => {
    expect(placeOf({ colo: "FRA", latitude: 50.11, longitude: 8.68 })).toBe("FRA");
    expect(placeOf({ latitude: 35.68, longitude: 139.69 })).toBe("35.7,139.7");
    expect(placeOf({ latitude: -33.87, longitude: 151.21 })).toBe("-33.9,151.2");
    expect(placeOf({})).toBeUndefined();
  });

  it("a pretended location is a place of its own, whatever colo the local runtime reports", () => {
    const cf = { colo: "DFW", latitude: "30.27", longitude: "-97.74" };
    expect(requestLocation(cf, null, true).place).toBe("DFW");
    expect(requestLocation(cf, "35.68,139.69", true).place).toBe("35.7,139.7");
    expect(requestLocation(cf, "35.68,139.69", false).place).toBe("DFW");
    expect(requestLocation(undefined, null, false).place).toBeUndefined();
  });
});
