import { describe, expect, it } from "vitest";
import { requestLocation } from "./request-location.ts";

describe("requestLocation", () => {
  it("reads request.cf, whose coordinates are strings", () => {
    expect(
      requestLocation({ latitude: "48.85", longitude: "2.35", continent: "EU", colo: "CDG" }, null, false),
    ).toEqual({
      latitude: 48.85,
      longitude: 2.35,
      continent: "EU",
      colo: "CDG",
      clientRttMs: undefined,
      place: "CDG",
    });
  });

  it("drops a half or out-of-range coordinate pair, keeping continent and colo", () => {
    expect(requestLocation({ latitude: "48.85", continent: "EU", colo: "CDG" }, null, false)).toEqual({
      latitude: undefined,
      longitude: undefined,
      continent: "EU",
      colo: "CDG",
      clientRttMs: undefined,
      place: "CDG",
    });
    expect(requestLocation({ latitude: "91", longitude: "2" }, null, false).latitude).toBeUndefined();
  });

  it("uses the override header only when allowed", () => {
    const cf = { latitude: "39.04", longitude: "-77.49", continent: "NA", colo: "IAD" };
    expect(requestLocation(cf, "35.68, 139.69", true)).toMatchObject({ latitude: 35.68, longitude: 139.69 });
    expect(requestLocation(cf, "35.68,139.69", false)).toMatchObject({ latitude: 39.04, longitude: -77.49 });
  });

  it.each(["", "35.68", "a,b", "35.68,139.69,1", "95,10"])("ignores a malformed override %j", (header) => {
    expect(requestLocation({ latitude: "1", longitude: "2" }, header, true)).toMatchObject({
      latitude: 1,
      longitude: 2,
    });
  });

  it("reads the client's round-trip time from request.cf, also under a location override", () => {
    const cf = { latitude: "39.04", longitude: "-77.49", clientTcpRtt: 0, clientQuicRtt: 12 };
    expect(requestLocation(cf, null, false).clientRttMs).toBe(12);
    expect(requestLocation(cf, "35.68,139.69", true)).toMatchObject({ latitude: 35.68, clientRttMs: 12 });
    expect(requestLocation({ clientTcpRtt: 0 }, null, false).clientRttMs).toBeUndefined();
  });

  it("has no location at all without cf", () => {
    expect(requestLocation(undefined, null, false)).toEqual({
      latitude: undefined,
      longitude: undefined,
      continent: undefined,
      colo: undefined,
    });
  });
});
