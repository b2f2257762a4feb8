/**
 * Data residency of a deployed environment (`DATA_RESIDENCY` in its `[env.<name>.vars]`). Two things must hold
 * for rows to stay in the region: every pool the Worker may forward to is in it (its `REGIONS`), and Cloudflare
 * decrypts, caches and runs the Worker for the environment's hostname only in the region's data centres, which
 * is Regional Services on the Custom Domain (a regional hostname; Data Localization Suite, an Enterprise
 * add-on). Without the second, a client's rows are decrypted, classified by the edge model and cached in
 * whichever colo it reaches, anywhere. Regional Services does not cover subrequests (the forward goes to the
 * pools listed, all in the region) nor Cron Triggers (the region status check, which carries no client rows).
 */

export interface Residency {
  /** The value of DATA_RESIDENCY. */
  name: string;
  /** Regional Services' region key for the Custom Domain. */
  regionKey: string;
  /** `continent` values (request.cf's two letters) a pool of this residency may have. */
  continents: readonly string[];
  /** For messages. */
  description: string;
}

/** Regional Services' managed regions this project has a residency for. */
export const RESIDENCIES: Readonly<Record<string, Residency>> = {
  eu: { name: "eu", regionKey: "eu", continents: ["EU"], description: "the European Union" },
};

/** The environment's residency from its vars, or undefined; an unknown value is refused. */
export function residencyOf(vars: Record<string, unknown>): Residency | undefined {
  const value = vars.DATA_RESIDENCY;
  if (value === undefined || value === "") return undefined;
  const residency = typeof value === "string" ? RESIDENCIES[value] : undefined;
  if (!residency) {
    throw new Error(
      `DATA_RESIDENCY must be one of ${Object.keys(RESIDENCIES).join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return residency;
}

/** The environment's REGIONS var (a JSON string or, from wrangler.toml, an array) as name and continent. */
export function regionsOf(vars: Record<string, unknown>): { name: string; url: string; continent?: string }[] {
  const raw = vars.REGIONS;
  const list = typeof raw === "string" ? (JSON.parse(raw) as unknown) : raw;
  return Array.isArray(list) ? (list as { name: string; url: string; continent?: string }[]) : [];
}

/** Pools outside the residency's region (or without a continent to tell). */
export function poolsOutside(regions: readonly { name: string; continent?: string }[], residency: Residency): string[] {
  return regions
    .filter((r) => !r.continent || !residency.continents.includes(r.continent))
    .map((r) => `${r.name} (continent ${r.continent ?? "not given"})`);
}

/** Why an environment with a residency is not deployed when Regional Services cannot be set for its hostnames. */
export function regionalServicesRefusal(env: string, residency: Residency, hostname: string, reason: string): string {
  return [
    `refusing to deploy ${env}: DATA_RESIDENCY=${residency.name} needs Regional Services (region "${residency.regionKey}") on ${hostname}, and Cloudflare answered: ${reason}`,
    `Without it, clients' rows are decrypted, classified at the edge and cached in whichever Cloudflare location they reach, anywhere: not ${residency.description} only.`,
    "Regional Services is part of the Data Localization Suite, an add-on to the Enterprise plan; with it enabled on the zone, deploy again.",
  ].join("\n");
}
