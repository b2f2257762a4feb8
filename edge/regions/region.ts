/** A regional pool the edge forwards to, as configured in `REGIONS`. */
export interface Region {
  /** Short name, shown in `servedBy: "regional:<name>"` and Server-Timing. */
  name: string;
  /** Base URL, no trailing slash. */
  url: string;
  latitude: number;
  longitude: number;
  /** Two-letter continent code as in `request.cf.continent` (NA, EU, AS, ...). */
  continent?: string;
  /** Cloudflare colos (IATA codes) that prefer this region when a request has no location. */
  colos?: string[];
  /**
   * A Fetcher binding of the Worker to send this region's calls through instead of global fetch (a service
   * binding; the local stack's `external` services); the URL still gives the path and Host.
   */
  binding?: string;
}

/** Where a request comes from, and how far its client is from the colo, as far as `request.cf` (or the local override) says. */
export interface RequestLocation {
  latitude?: number;
  longitude?: number;
  continent?: string;
  colo?: string;
  /** The client's round-trip time to the colo in ms (`request.cf`'s clientTcpRtt or clientQuicRtt); undefined: unknown. */
  clientRttMs?: number;
  /**
   * Where the request reached the edge, as the key of the reach evidence (regions/place.ts): the colo, or locally
   * the pretended location; undefined when neither is known.
   */
  place?: string;
}
