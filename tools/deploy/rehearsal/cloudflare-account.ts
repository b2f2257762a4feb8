/**
 * What a stand-in for Cloudflare's API keeps of one account, and how each call changes it: Workers with their
 * versions, deployments, secrets, cron schedules and Custom Domains; KV namespaces; zones with the DNS records
 * that were there before (what a Custom Domain would take over) and their Regional Services hostnames. Pure
 * data and functions; `cloudflare-api.ts` serves them over HTTP to wrangler and to `npm run deploy`.
 *
 * The semantics are the real API's as wrangler 4.164 relies on them (its source, node_modules/wrangler): a
 * required secret the upload does not carry is `inherit`ed from the latest version or refused (10057); secrets
 * live in versions, and `secret put`/`secrets-bulk` make and deploy a new version from the latest one, refused
 * while the latest is not the one deployed (10215); a deployment of a version whose secrets differ from the
 * latest version's is refused (10220, "The following secrets have changed: ...") unless `force`; a Custom
 * Domain on a hostname with a DNS record of its own is a `conflicting` entry of the changeset, replaced only
 * with `override_existing_dns_record`.
 */

export interface Binding {
  name: string;
  type: string;
  text?: string;
  [field: string]: unknown;
}

export interface Version {
  id: string;
  number: number;
  created_on: string;
  bindings: Binding[];
  annotations: Record<string, string>;
}

export interface Deployment {
  id: string;
  created_on: string;
  source: string;
  strategy: "percentage";
  versions: { version_id: string; percentage: number }[];
  annotations: Record<string, string>;
}

export interface Script {
  name: string;
  /** Oldest first. */
  versions: Version[];
  /** Newest first, as the API lists them. */
  deployments: Deployment[];
  schedules: { cron: string }[];
  workersDev: boolean;
  /**
   * The latest Durable Object migration applied (a plain deploy's `migrations.new_tag`); wrangler reads it back
   * to know which of wrangler.toml's `[[migrations]]` are pending, and refuses `versions upload` while any is.
   */
  migrationTag?: string;
}

export interface CustomDomain {
  id: string;
  hostname: string;
  service: string;
  environment: string;
  zone_id: string;
  zone_name: string;
}

export interface Zone {
  id: string;
  name: string;
  /** Regional Services (Data Localization Suite) is enabled for the zone. */
  regionalServices: boolean;
}

export interface Account {
  id: string;
  zones: Zone[];
  /** DNS records that exist apart from Custom Domains (hostname → a description such as "A 192.0.2.1"). */
  dnsRecords: Map<string, string>;
  kvNamespaces: Map<string, { id: string; title: string }>;
  /** R2 buckets by name (the model registry's: the Worker binds it, wrangler checks it exists). */
  r2Buckets: Map<string, { name: string; creation_date: string; location: string }>;
  scripts: Map<string, Script>;
  customDomains: CustomDomain[];
  regionalHostnames: { hostname: string; region_key: string; zone_id: string; created_on: string }[];
}

/** A refusal as the API words it: its HTTP status, code and message. */
export class ApiRefusal extends Error {
  readonly status: number;
  readonly code: number;
  constructor(status: number, code: number, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const SCRIPT_NOT_FOUND = 10007;
export const INVALID_INHERIT_BINDING = 10057;
export const LATEST_VERSION_NOT_DEPLOYED = 10215;
export const SECRETS_CHANGED = 10220;

export function newAccount(id: string, zones: readonly { name: string; regionalServices?: boolean }[]): Account {
  return {
    id,
    zones: zones.map((z, i) => ({
      id: `${(i + 1).toString(16).padStart(2, "0")}${"0".repeat(30)}`,
      name: z.name,
      regionalServices: z.regionalServices ?? false,
    })),
    dnsRecords: new Map(),
    kvNamespaces: new Map(),
    r2Buckets: new Map(),
    scripts: new Map(),
    customDomains: [],
    regionalHostnames: [],
  };
}

/** Ids shaped like the API's, deterministic per account so that runs print alike. */
export class Ids {
  #n = 0;
  uuid(): string {
    this.#n += 1;
    const hex = this.#n.toString(16).padStart(12, "0");
    return `00000000-0000-4000-8000-${hex}`;
  }
  hex(): string {
    this.#n += 1;
    return this.#n.toString(16).padStart(32, "0");
  }
}

export function script(account: Account, name: string): Script {
  const found = account.scripts.get(name);
  if (!found) throw new ApiRefusal(404, SCRIPT_NOT_FOUND, "workers.api.error.script_not_found");
  return found;
}

export const latestVersion = (s: Script): Version | undefined => s.versions.at(-1);

/** The version that serves all traffic now, if one does. */
export function servingAlone(s: Script): Version | undefined {
  const deployment = s.deployments[0];
  const only = deployment?.versions.length === 1 ? deployment.versions[0]!.version_id : undefined;
  return s.versions.find((v) => v.id === only);
}

const secretValues = (v: Version | undefined) =>
  new Map((v?.bindings ?? []).filter((b) => b.type === "secret_text").map((b) => [b.name, b.text]));

/**
 * A new version from an upload's metadata: `inherit` bindings and the types in `keep_bindings` come from the
 * latest version; an `inherit` of a binding it does not have is refused as the API refuses it.
 */
export function uploadVersion(
  s: Script,
  metadata: { bindings?: Binding[]; keep_bindings?: string[]; annotations?: Record<string, string> },
  ids: Ids,
  now: string,
): Version {
  const previous = latestVersion(s)?.bindings ?? [];
  const bindings: Binding[] = [];
  for (const binding of metadata.bindings ?? []) {
    if (binding.type !== "inherit") {
      bindings.push(binding);
      continue;
    }
    const kept = previous.find((b) => b.name === binding.name);
    if (!kept) {
      throw new ApiRefusal(400, INVALID_INHERIT_BINDING, `inherit binding '${binding.name}' is invalid`);
    }
    bindings.push(kept);
  }
  const keepTypes = new Set(metadata.keep_bindings ?? []);
  for (const b of previous) {
    if (keepTypes.has(b.type) && !bindings.some((n) => n.name === b.name)) bindings.push(b);
  }
  const version: Version = {
    id: ids.uuid(),
    number: s.versions.length + 1,
    created_on: now,
    bindings,
    annotations: metadata.annotations ?? {},
  };
  s.versions.push(version);
  return version;
}

/**
 * A deployment: every version must exist and the shares add up to 100. A version whose secrets differ from the
 * latest version's is refused naming them (10220) unless `force`: the rollback wrangler forces when not on a
 * terminal.
 */
export function deploy(
  s: Script,
  versions: { version_id: string; percentage: number }[],
  annotations: Record<string, string>,
  force: boolean,
  ids: Ids,
  now: string,
): Deployment {
  const total = versions.reduce((sum, v) => sum + v.percentage, 0);
  if (versions.length === 0 || Math.abs(total - 100) > 1e-9) {
    throw new ApiRefusal(400, 10000, `a deployment's versions must add up to 100%, got ${total}%`);
  }
  const latest = secretValues(latestVersion(s));
  for (const { version_id } of versions) {
    const version = s.versions.find((v) => v.id === version_id);
    if (!version) throw new ApiRefusal(404, 10000, `version ${version_id} not found`);
    if (force) continue;
    const own = secretValues(version);
    const changed = [...new Set([...latest.keys(), ...own.keys()])].filter((n) => latest.get(n) !== own.get(n));
    if (changed.length > 0) {
      throw new ApiRefusal(
        400,
        SECRETS_CHANGED,
        `Cannot deploy version ${version_id}: its secrets differ from the latest version's. The following secrets have changed: ${changed.join(", ")}`,
      );
    }
  }
  const deployment: Deployment = {
    id: ids.uuid(),
    created_on: now,
    source: "wrangler",
    strategy: "percentage",
    versions,
    annotations,
  };
  s.deployments.unshift(deployment);
  return deployment;
}

/**
 * `wrangler secret put`/`secret bulk`: a new version from the latest one with these secrets set (null deletes),
 * deployed to 100%. Refused while the latest version is not the one serving (a gradual deploy, or a rollback).
 */
export function putSecrets(
  s: Script,
  secrets: Record<string, string | null>,
  ids: Ids,
  now: string,
  deployNow: boolean,
): Version {
  const latest = latestVersion(s);
  if (!latest) throw new ApiRefusal(404, SCRIPT_NOT_FOUND, "workers.api.error.script_not_found");
  if (deployNow && servingAlone(s)?.id !== latest.id) {
    throw new ApiRefusal(
      400,
      LATEST_VERSION_NOT_DEPLOYED,
      "The latest version of this Worker is not deployed: secrets can only be changed on the deployed version",
    );
  }
  const bindings = latest.bindings.filter((b) => !(b.name in secrets));
  for (const [name, text] of Object.entries(secrets)) {
    if (text !== null) bindings.push({ name, type: "secret_text", text });
  }
  const version: Version = {
    id: ids.uuid(),
    number: s.versions.length + 1,
    created_on: now,
    bindings,
    annotations: {},
  };
  s.versions.push(version);
  if (deployNow) deploy(s, [{ version_id: version.id, percentage: 100 }], {}, true, ids, now);
  return version;
}

export interface Origin {
  hostname: string;
  zone_id?: string;
  zone_name?: string;
}

/** The zone a hostname is in: the one named, else the longest zone name it ends with. */
export function zoneOf(account: Account, origin: Origin): Zone {
  const named = origin.zone_id ?? origin.zone_name;
  const zone = named
    ? account.zones.find((z) => z.id === named || z.name === named)
    : account.zones
        .filter((z) => origin.hostname === z.name || origin.hostname.endsWith(`.${z.name}`))
        .sort((a, b) => b.name.length - a.name.length)[0];
  if (!zone || !(origin.hostname === zone.name || origin.hostname.endsWith(`.${zone.name}`))) {
    throw new ApiRefusal(400, 100117, `${origin.hostname} is not in a zone of this account`);
  }
  return zone;
}

/** What `PUT .../domains/records` would change, as `POST .../domains/changeset?replace_state=true` reports it. */
export function domainChangeset(account: Account, service: string, origins: readonly Origin[]) {
  const added: CustomDomain[] = [];
  const updated: (CustomDomain & { modified: boolean })[] = [];
  const conflicting: { hostname: string; zone_id: string; zone_name: string }[] = [];
  for (const origin of origins) {
    const zone = zoneOf(account, origin);
    const existing = account.customDomains.find((d) => d.hostname === origin.hostname);
    if (existing) updated.push({ ...existing, modified: existing.service !== service });
    else {
      added.push({
        id: "",
        hostname: origin.hostname,
        service,
        environment: "production",
        zone_id: zone.id,
        zone_name: zone.name,
      });
      if (account.dnsRecords.has(origin.hostname)) {
        conflicting.push({ hostname: origin.hostname, zone_id: zone.id, zone_name: zone.name });
      }
    }
  }
  const removed = account.customDomains.filter(
    (d) => d.service === service && !origins.some((o) => o.hostname === d.hostname),
  );
  return { added, removed, updated, conflicting };
}

/** `PUT .../domains/records`: refused without the overrides the changeset says it needs. */
export function putDomains(
  account: Account,
  service: string,
  body: { origins: Origin[]; override_existing_origin?: boolean; override_existing_dns_record?: boolean },
  ids: Ids,
): CustomDomain[] {
  const changes = domainChangeset(account, service, body.origins);
  if (changes.conflicting.length > 0 && !body.override_existing_dns_record) {
    throw new ApiRefusal(409, 100117, `DNS records exist for ${changes.conflicting.map((c) => c.hostname).join(", ")}`);
  }
  if (changes.updated.some((u) => u.modified) && !body.override_existing_origin) {
    throw new ApiRefusal(409, 100116, "a hostname is already a Custom Domain of another Worker");
  }
  for (const c of changes.conflicting) account.dnsRecords.delete(c.hostname);
  account.customDomains = account.customDomains.filter(
    (d) => d.service !== service && !body.origins.some((o) => o.hostname === d.hostname),
  );
  for (const origin of body.origins) {
    const zone = zoneOf(account, origin);
    account.customDomains.push({
      id: ids.hex(),
      hostname: origin.hostname,
      service,
      environment: "production",
      zone_id: zone.id,
      zone_name: zone.name,
    });
  }
  return account.customDomains.filter((d) => d.service === service);
}
