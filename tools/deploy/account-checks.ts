/**
 * What the deploy asks Cloudflare before it lets wrangler act, and the rollback it makes itself: thin I/O around
 * the pure rules of custom-domains.ts, residency.ts, rollback.ts and config-edits.ts.
 */
import { CloudflareApiError, type CloudflareClient } from "./cloudflare-client.ts";
import { isPlaceholderId } from "./config-edits.ts";
import { type DomainChangeset, type Takeover, takeovers } from "./custom-domains.ts";
import { type LiveDeployment, parseDeployment } from "./plan.ts";
import { type Residency, regionalServicesRefusal } from "./residency.ts";
import {
  changedSecrets,
  type DeploymentRecord,
  rollbackRefusal,
  rollbackTarget,
  SECRETS_CHANGED_CODE,
} from "./rollback.ts";

/** The API's "script not found". */
const SCRIPT_NOT_FOUND = 10007;

export interface Route {
  pattern: string;
  custom_domain?: boolean;
  zone_name?: string;
}

const scripts = (api: CloudflareClient, name: string) => `/accounts/${api.accountId}/workers/scripts/${name}`;

/** The secret names set on the Worker (its latest version), or `exists: false` for a Worker not deployed yet. */
export async function workerSecrets(
  api: CloudflareClient,
  script: string,
): Promise<{ exists: boolean; names: string[] }> {
  try {
    const list = await api.call<{ name: string }[]>("GET", `${scripts(api, script)}/secrets`);
    return { exists: true, names: list.map((s) => s.name) };
  } catch (err) {
    if (err instanceof CloudflareApiError && err.code === SCRIPT_NOT_FOUND) return { exists: false, names: [] };
    throw new Error(
      `Cloudflare did not list ${script}'s secrets, so they cannot be checked: ${(err as Error).message}`,
    );
  }
}

/** The deployment serving now: which versions, with their shares of traffic. */
export async function liveDeployment(api: CloudflareClient, script: string): Promise<LiveDeployment> {
  const { deployments } = await api.call<{ deployments: DeploymentRecord[] }>(
    "GET",
    `${scripts(api, script)}/deployments`,
  );
  return parseDeployment(deployments[0]);
}

/** Every KV namespace the environment binds exists in the account; a placeholder or unknown id is refused. */
export async function checkKvNamespaces(
  api: CloudflareClient,
  env: string,
  namespaces: readonly { binding: string; id?: string }[],
): Promise<string[]> {
  const shown: string[] = [];
  for (const { binding, id } of namespaces) {
    const create = `npx wrangler kv namespace create ${binding} --env ${env}, and put the id it prints in wrangler.toml`;
    if (!id || isPlaceholderId(id)) {
      throw new Error(
        `refusing to deploy ${env}: ${binding}'s KV namespace id is the placeholder ${id ?? "(none)"}: ${create}`,
      );
    }
    try {
      const ns = await api.call<{ id: string; title: string }>(
        "GET",
        `/accounts/${api.accountId}/storage/kv/namespaces/${id}`,
      );
      shown.push(`${binding} → ${ns.title} (${ns.id})`);
    } catch (err) {
      if (err instanceof CloudflareApiError && err.status === 404) {
        throw new Error(
          `refusing to deploy ${env}: ${binding}'s KV namespace ${id} is not in account ${api.accountId}: ${create}`,
        );
      }
      throw err;
    }
  }
  return shown;
}

/** The changeset wrangler will act on, and what in it would be taken over. */
export async function customDomainTakeovers(
  api: CloudflareClient,
  script: string,
  routes: readonly Route[],
): Promise<{ changeset: DomainChangeset; found: Takeover[] }> {
  const origins = routes
    .filter((r) => r.custom_domain)
    .map((r) => ({ hostname: r.pattern, ...(r.zone_name ? { zone_name: r.zone_name } : {}) }));
  const changeset = await api.call<DomainChangeset>(
    "POST",
    `${scripts(api, script)}/domains/changeset?replace_state=true`,
    origins,
  );
  const services = new Map<string, string>();
  for (const u of changeset.updated.filter((d) => d.modified)) {
    const record = await api.call<{ service: string }>(
      "GET",
      `/accounts/${api.accountId}/workers/domains/records/${u.id}`,
    );
    services.set(u.id, record.service);
  }
  return { changeset, found: takeovers(changeset, script, services) };
}

/**
 * Regional Services for each Custom Domain of a residency-bound environment, set before the Custom Domain goes
 * live: found with the right region, or created. Refuses (throws) when Cloudflare will not set it.
 */
export async function ensureRegionalHostnames(
  api: CloudflareClient,
  env: string,
  residency: Residency,
  routes: readonly Route[],
): Promise<string[]> {
  const done: string[] = [];
  for (const route of routes.filter((r) => r.custom_domain)) {
    if (!route.zone_name)
      throw new Error(`[env.${env}] route ${route.pattern}: a zone_name is needed to set Regional Services`);
    const [zone] = await api.call<{ id: string }[]>("GET", `/zones?name=${encodeURIComponent(route.zone_name)}`);
    if (!zone) throw new Error(`refusing to deploy ${env}: zone ${route.zone_name} is not in this account`);
    const path = `/zones/${zone.id}/addressing/regional_hostnames`;
    let current: { region_key: string } | undefined;
    try {
      current = await api.call<{ region_key: string }>("GET", `${path}/${route.pattern}`);
    } catch (err) {
      if (!(err instanceof CloudflareApiError && err.status === 404)) throw err;
    }
    if (current && current.region_key !== residency.regionKey) {
      throw new Error(
        `refusing to deploy ${env}: ${route.pattern} is regionalised to "${current.region_key}", not "${residency.regionKey}"`,
      );
    }
    if (!current) {
      try {
        await api.call("POST", path, { hostname: route.pattern, region_key: residency.regionKey });
      } catch (err) {
        if (err instanceof CloudflareApiError) {
          throw new Error(regionalServicesRefusal(env, residency, route.pattern, `${err.status} ${err.message}`));
        }
        throw err;
      }
    }
    done.push(`${route.pattern} → region ${residency.regionKey}${current ? " (already)" : ""}`);
  }
  return done;
}

export interface RollbackPlan {
  target: string;
  tag: string | undefined;
}

/** The version to return to (given, or wrangler's choice) and the tag it was uploaded with. */
export async function rollbackPlan(
  api: CloudflareClient,
  script: string,
  versionId: string | undefined,
): Promise<RollbackPlan> {
  const { deployments } = await api.call<{ deployments: DeploymentRecord[] }>(
    "GET",
    `${scripts(api, script)}/deployments`,
  );
  const target = versionId ?? rollbackTarget(deployments);
  const version = await api.call<{ annotations?: Record<string, string> }>(
    "GET",
    `${scripts(api, script)}/versions/${target}`,
  );
  return { target, tag: version.annotations?.["workers/tag"] };
}

/**
 * The rollback: a deployment of the target at 100%, unforced, so that Cloudflare refuses it when the target's
 * secrets differ from today's; refused then unless `restoreOldSecrets`, which forces it as `wrangler rollback`
 * would.
 */
export async function rollBack(
  api: CloudflareClient,
  env: string,
  script: string,
  plan: RollbackPlan,
  message: string,
  restoreOldSecrets: boolean,
  note: (line: string) => void,
): Promise<void> {
  const body = {
    strategy: "percentage",
    versions: [{ version_id: plan.target, percentage: 100 }],
    annotations: { "workers/message": message },
  };
  try {
    await api.call("POST", `${scripts(api, script)}/deployments`, body);
  } catch (err) {
    if (!(err instanceof CloudflareApiError && err.code === SECRETS_CHANGED_CODE)) throw err;
    const changed = changedSecrets(err.message);
    if (!restoreOldSecrets) throw new Error(rollbackRefusal(env, plan.target, changed, plan.tag));
    note(`--restore-old-secrets: ${plan.target} comes back with its own values of ${changed.join(", ")}`);
    await api.call("POST", `${scripts(api, script)}/deployments?force=true`, body);
  }
}
