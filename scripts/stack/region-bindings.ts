/** A Miniflare service binding to a plain HTTP server outside workerd. */
export interface ExternalService {
  external: { address: string; http: Record<string, never> };
}

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost):(\d{1,5})$/;

/** The binding a loopback region is reached through: `REGION_` and its name in capitals (`eu-west` -> `REGION_EU_WEST`). */
export const regionBindingName = (region: string) => `REGION_${region.toUpperCase().replace(/-/g, "_")}`;

/**
 * The REGIONS var of a local stack with every loopback region (`http://127.0.0.1:PORT`) reached through an
 * `external` service binding of its own, and those bindings. In Miniflare a global fetch passes through an
 * extra Worker of Miniflare's on every call, which Cloudflare does not have; a service binding is the direct
 * connection (docs/performance.md). Other regions, and REGIONS that do not parse, are left as they are (the
 * Worker's own environment check reports what is wrong).
 */
export function loopbackRegionBindings(regions: unknown): {
  regions: unknown;
  serviceBindings: Record<string, ExternalService>;
} {
  let list: unknown = regions;
  if (typeof regions === "string") {
    try {
      list = JSON.parse(regions);
    } catch {
      return { regions, serviceBindings: {} };
    }
  }
  if (!Array.isArray(list)) return { regions, serviceBindings: {} };
  const serviceBindings: Record<string, ExternalService> = {};
  const bound = list.map((region: unknown) => {
    const { name, url, binding } = (region ?? {}) as { name?: unknown; url?: unknown; binding?: unknown };
    const loopback = typeof url === "string" ? LOOPBACK.exec(url.replace(/\/+$/, "")) : null;
    if (typeof name !== "string" || !loopback || binding !== undefined) return region;
    const bindingName = regionBindingName(name);
    serviceBindings[bindingName] = { external: { address: `127.0.0.1:${loopback[2]}`, http: {} } };
    return { ...(region as object), binding: bindingName };
  });
  return { regions: typeof regions === "string" ? JSON.stringify(bound) : bound, serviceBindings };
}
