import { type CfRoundTrip, clientRttMs } from "./client-reserve.ts";
import { placeOf } from "./place.ts";
import type { RequestLocation } from "./region.ts";

/** The parts of `request.cf` that locate a request. Cloudflare sends latitude/longitude as strings. */
export interface CfLocation extends CfRoundTrip {
  latitude?: string | number;
  longitude?: string | number;
  continent?: string;
  colo?: string;
}

function coordinate(raw: string | number | undefined, limit: number): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = typeof raw === "number" ? raw : Number(raw);
  return Number.isFinite(value) && Math.abs(value) <= limit ? value : undefined;
}

/**
 * The request's location: `request.cf`, or, when `allowOverride` is set (local stack and demo only),
 * the `x-edgecascade-location: <lat>,<lon>` header instead, and with it the place whose evidence the reach
 * estimate reads (regions/place.ts: the colo, or the pretended location). The client's round-trip time always comes from
 * `request.cf` (the local stack sets it there, as Miniflare allows). A malformed override is ignored rather than
 * refused: it only steers region choice.
 */
export function requestLocation(
  cf: CfLocation | undefined,
  override: string | null | undefined,
  allowOverride: boolean,
): RequestLocation {
  const location: RequestLocation = {
    latitude: coordinate(cf?.latitude, 90),
    longitude: coordinate(cf?.longitude, 180),
    continent: cf?.continent || undefined,
    colo: cf?.colo || undefined,
    clientRttMs: clientRttMs(cf),
  };
  if (allowOverride && override) {
    const [lat, lon, extra] = override.split(",");
    const latitude = coordinate(lat?.trim(), 90);
    const longitude = coordinate(lon?.trim(), 180);
    if (extra === undefined && latitude !== undefined && longitude !== undefined) {
      return { ...location, latitude, longitude, place: placeOf({ latitude, longitude }) };
    }
  }
  if (location.latitude === undefined || location.longitude === undefined) {
    location.latitude = undefined;
    location.longitude = undefined;
  }
  const place = placeOf(location);
  if (place !== undefined) location.place = place;
  return location;
}
