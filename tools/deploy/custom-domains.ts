/**
 * Custom Domains that would take something over. wrangler 4.164 (`publishCustomDomains`) asks on a terminal
 * before it replaces a hostname's DNS record or another Worker's Custom Domain; without a terminal (CI, or
 * `npm run deploy`, which runs it piped) it sets `override_existing_dns_record` and `override_existing_origin`
 * and replaces them silently. So the deploy asks Cloudflare first, with the same changeset call wrangler makes
 * (`POST /accounts/:id/workers/scripts/:name/domains/changeset?replace_state=true`), and refuses unless told
 * `--take-over-dns`.
 */

/** The changeset's answer, as wrangler reads it. */
export interface DomainChangeset {
  added: { hostname: string }[];
  removed: { hostname: string }[];
  updated: { id: string; hostname: string; modified?: boolean; service?: string }[];
  conflicting: { hostname: string }[];
}

export interface Takeover {
  hostname: string;
  /** What is there now. */
  what: string;
}

/**
 * What the deploy would take over: a DNS record on a hostname that is not a Custom Domain yet, or a Custom
 * Domain another Worker has (`services`: the current service of each updated domain id, as
 * `GET /accounts/:id/workers/domains/records/:id` tells).
 */
export function takeovers(
  changeset: DomainChangeset,
  script: string,
  services: ReadonlyMap<string, string>,
): Takeover[] {
  const found: Takeover[] = changeset.conflicting.map((c) => ({
    hostname: c.hostname,
    what: "a DNS record of its own (not a Custom Domain)",
  }));
  for (const u of changeset.updated) {
    const service = services.get(u.id) ?? u.service;
    if (u.modified && service !== script) {
      found.push({ hostname: u.hostname, what: `the Custom Domain of another Worker, "${service ?? "unknown"}"` });
    }
  }
  return found;
}

export function takeoverRefusal(env: string, found: readonly Takeover[]): string {
  return [
    `refusing to deploy ${env}: its Custom Domains would take over what is there now:`,
    ...found.map((t) => `  ${t.hostname}: ${t.what}`),
    "wrangler replaces these without asking when it runs without a terminal. Delete the record (or move the other",
    `Worker off the hostname), or deploy with --take-over-dns to replace them.`,
  ].join("\n");
}

/** One line per Custom Domain for the deploy's log. */
export function changesetSummary(changeset: DomainChangeset): string {
  const parts = [
    ...changeset.added.map((d) => `${d.hostname} new`),
    ...changeset.updated.map((d) => `${d.hostname} ${d.modified ? "moved to this Worker" : "unchanged"}`),
    ...changeset.removed.map((d) => `${d.hostname} removed`),
  ];
  return parts.length ? parts.join(", ") : "none";
}
