import type { Region, RequestLocation } from "./region.ts";

/** What the edge currently believes of a region; regions missing from the map count as healthy. */
export type RegionHealth = "healthy" | "unhealthy";

const EARTH_RADIUS_KM = 6371;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in km (haversine). */
export function distanceKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }) {
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * The order in which to try regions for a request: healthy before unhealthy, and within each group the
 * nearest first. "Nearest" is great-circle distance when the request has coordinates; without them,
 * regions on the request's continent come first, then regions that list the request's colo; ties keep
 * the configured order. Unhealthy regions stay in the list, last, so that a wrong health belief cannot
 * leave a request with nowhere to go.
 */
export function regionOrder(
  regions: readonly Region[],
  location: RequestLocation,
  health: Readonly<Record<string, RegionHealth>>,
): Region[] {
  const { latitude, longitude, continent, colo } = location;
  const hasPoint = latitude !== undefined && longitude !== undefined;
  const rank = (region: Region): number => {
    if (hasPoint) return distanceKm({ latitude, longitude }, region);
    if (continent && region.continent === continent) return 0;
    if (colo && region.colos?.includes(colo)) return 1;
    return 2;
  };
  return regions
    .map((region, index) => ({ region, index, unhealthy: health[region.name] === "unhealthy", rank: rank(region) }))
    .sort((a, b) => Number(a.unhealthy) - Number(b.unhealthy) || a.rank - b.rank || a.index - b.index)
    .map((r) => r.region);
}
