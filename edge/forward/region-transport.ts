import type { Region } from "../regions/region.ts";

/** How the edge sends a call to a region: fetch, through the region's binding when it names one. */
export type RegionTransport = (region: Region, url: string, init: RequestInit) => Promise<Response>;

/** A binding the edge can send HTTP through (a service binding). */
interface FetcherLike {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

const isFetcher = (x: unknown): x is FetcherLike => typeof (x as FetcherLike | undefined)?.fetch === "function";

/**
 * The names of regions' bindings (`REGIONS[].binding`) the Worker lacks: the environment check refuses
 * them, so that a misnamed binding is a start-up error rather than a region that silently uses the internet.
 */
export function missingBindings(regions: readonly Region[], env: object): string[] {
  return regions.flatMap((r) =>
    r.binding === undefined || isFetcher((env as Record<string, unknown>)[r.binding]) ? [] : [r.binding],
  );
}

/**
 * The edge's way to each region: its binding's `fetch` where `REGIONS` names one, else global fetch. In
 * local workerd an `external` service binding is the direct connection global fetch is on Cloudflare:
 * Miniflare sends every global fetch through an extra Worker of its own (docs/performance.md).
 */
export function regionTransport(regions: readonly Region[], env: object): RegionTransport {
  const bindings = new Map<string, FetcherLike>();
  for (const region of regions) {
    const binding = region.binding === undefined ? undefined : (env as Record<string, unknown>)[region.binding];
    if (isFetcher(binding)) bindings.set(region.name, binding);
  }
  return (region, url, init) => {
    const binding = bindings.get(region.name);
    return binding ? binding.fetch(url, init) : fetch(url, init);
  };
}
