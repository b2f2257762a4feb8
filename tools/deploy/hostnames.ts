/**
 * Which hostnames Cloudflare can answer over TLS without a certificate bought for them. The pools are plain
 * proxied DNS records (not Custom Domains, which get a certificate of their own): their TLS at Cloudflare's
 * edge is the zone's Universal SSL certificate, which covers the apex and one level below it (`example.com`,
 * `*.example.com`) in a full-setup zone, nothing deeper. A deeper name needs Advanced Certificate Manager (an
 * advanced certificate or Total TLS) or an uploaded certificate. (Cloudflare's SSL docs, "Universal SSL:
 * limitations, hostname coverage".)
 */

/** Whether `host` is `zone` or one label below it. */
export function universalSslCovers(zone: string, host: string): boolean {
  if (host === zone) return true;
  if (!host.endsWith(`.${zone}`)) return false;
  return !host.slice(0, -zone.length - 1).includes(".");
}

/** The zone of `host` among `zones`: the longest that is it or a suffix of it. */
export function zoneOfHost(zones: readonly string[], host: string): string | undefined {
  return zones.filter((z) => host === z || host.endsWith(`.${z}`)).sort((a, b) => b.length - a.length)[0];
}

/**
 * For each https region URL in one of `zones` that Universal SSL does not cover, what goes wrong and what to do.
 * Hosts outside the zones the environment names are not judged (their zone is not known here).
 */
export function poolCertificateProblems(
  regions: readonly { name: string; url: string }[],
  zones: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const region of regions) {
    const url = new URL(region.url);
    if (url.protocol !== "https:") continue;
    const zone = zoneOfHost(zones, url.hostname);
    if (!zone || universalSslCovers(zone, url.hostname)) continue;
    const label = url.hostname.slice(0, -zone.length - 1);
    problems.push(
      `region ${region.name}: ${url.hostname} is ${label.split(".").length} levels below the zone ${zone}, and ` +
        `Universal SSL covers ${zone} and *.${zone} only: TLS to it fails at Cloudflare (the Worker's calls, ` +
        `npm run rollout) unless an advanced certificate (Advanced Certificate Manager) covers it. One level: ` +
        `${label.replace(/\./g, "-")}.${zone}`,
    );
  }
  return problems;
}
