import { distanceKm } from "../../edge/regions/order.ts";
import { FLOOR_MS, KM_PER_MS } from "../../edge/regions/prior.ts";

/** A place clients send from, as the local stack's `x-edgecascade-location` takes it. */
export interface ClientLocation {
  name: string;
  latitude: number;
  longitude: number;
}

/**
 * Where the simulated clients are. On Cloudflare a client reaches the colo next to it, so the client's place is
 * also the edge's, and the distance that matters is the one from there to each region. Three are next to a
 * region (us: Ashburn, eu: Frankfurt, ap: Tokyo); São Paulo and Sydney are far from every region.
 */
export const CLIENT_LOCATIONS: readonly ClientLocation[] = [
  { name: "new-york", latitude: 40.71, longitude: -74.01 },
  { name: "frankfurt", latitude: 50.11, longitude: 8.68 },
  { name: "tokyo", latitude: 35.68, longitude: 139.69 },
  { name: "sao-paulo", latitude: -23.55, longitude: -46.63 },
  { name: "sydney", latitude: -33.87, longitude: 151.21 },
];

/**
 * The one-way network delay between two places, in ms, rounded to 0.1: `FLOOR_MS + km / KM_PER_MS`, the
 * constants of the edge's distance prior (edge/regions/prior.ts), so that both use one model of distance. It puts
 * Frankfurt-Ashburn at 44.7 ms (measured round trips are about 90 ms) and Sydney-Tokyo at 53.2 ms (about 105).
 */
export function oneWayDelayMs(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }) {
  return Math.round((FLOOR_MS + distanceKm(a, b) / KM_PER_MS) * 10) / 10;
}
