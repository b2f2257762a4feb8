import type { RequestLocation } from "./region.ts";

/**
 * The place a request reached the edge from, as the key under which the reach evidence is kept (pure): the colo
 * (`request.cf.colo`), else its coordinates to a tenth of a degree (about 10 km; the local stack's pretended
 * locations, which have no colo); undefined when neither is known. An isolate mostly serves its own colo, but
 * not only: a round trip measured from one place says nothing of another's.
 */
export function placeOf(location: Pick<RequestLocation, "colo" | "latitude" | "longitude">): string | undefined {
  if (location.colo) return location.colo;
  if (location.latitude === undefined || location.longitude === undefined) return undefined;
  return `${location.latitude.toFixed(1)},${location.longitude.toFixed(1)}`;
}
