import { distanceKm } from "./order.ts";
import type { Region, RequestLocation } from "./region.ts";

/** Light in fibre covers about 200 km per ms; real routes run about 1.33x the great circle: 150 km per ms. */
export const KM_PER_MS = 150;
/** What a next-door region still costs one way (switching, the last mile), in ms. */
export const FLOOR_MS = 1;

/**
 * The round trip to expect from the colo serving a request to a region before the isolate has evidence of its
 * own, in ms: `2 * (FLOOR_MS + km / KM_PER_MS)` over the great-circle distance. The colo's place is the
 * request's `request.cf` latitude and longitude (a client reaches the colo next to it); without them, a colo
 * the region lists in `colos` is next door (`2 * FLOOR_MS`). Undefined when neither says where the colo is:
 * the region is then tried, and its answers become the evidence. Pure.
 */
export function priorRoundTripMs(location: RequestLocation | undefined, region: Region): number | undefined {
  if (location?.latitude !== undefined && location.longitude !== undefined) {
    const km = distanceKm({ latitude: location.latitude, longitude: location.longitude }, region);
    return 2 * (FLOOR_MS + km / KM_PER_MS);
  }
  if (location?.colo && region.colos?.includes(location.colo)) return 2 * FLOOR_MS;
  return undefined;
}
