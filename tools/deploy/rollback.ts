/**
 * A rollback that never brings back a rotated secret. Secrets belong to Worker versions: `wrangler secret put`
 * makes a new version, so an older version still carries the old values. Cloudflare refuses a deployment of a
 * version whose secrets differ from the latest version's (error 10220, "The following secrets have changed:
 * ...") unless it is forced, and `wrangler rollback` forces it whenever it runs without a terminal (wrangler
 * 4.164's `handleRollback`: the confirmation falls back to yes). After a rotated REGIONAL_SHARED_SECRET that
 * would sign every forward with the old secret: the pools answer 401 and every unsure row degrades.
 * `npm run deploy -- --rollback` therefore makes the deployment itself, unforced, and refuses on 10220 unless
 * told `--restore-old-secrets`.
 */

/** A deployment as `GET /accounts/:id/workers/scripts/:name/deployments` lists it. */
export interface DeploymentRecord {
  id: string;
  created_on: string;
  versions: { version_id: string; percentage: number }[];
}

export const SECRETS_CHANGED_CODE = 10220;

/**
 * The version `wrangler rollback` without an id returns to (its `fetchDefaultRollbackVersionId`): the newest
 * deployment before the current one in which a version served 100% of traffic.
 */
export function rollbackTarget(deployments: readonly DeploymentRecord[]): string {
  const sorted = [...deployments].sort((a, b) => b.created_on.localeCompare(a.created_on));
  for (const deployment of sorted.slice(1)) {
    const whole = deployment.versions.find((v) => v.percentage === 100);
    if (whole) return whole.version_id;
  }
  throw new Error("no earlier deployment served one version at 100%: give the version to return to with --version-id");
}

/** The secret names Cloudflare's 10220 refusal lists. */
export function changedSecrets(message: string): string[] {
  const listed = message.match(/The following secrets have changed:\s*(.*)$/s)?.[1] ?? "";
  return listed
    .replace(/\s*\[code: \d+\]\s*$/, "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function rollbackRefusal(
  env: string,
  target: string,
  changed: readonly string[],
  tag: string | undefined,
): string {
  return [
    `refusing to roll ${env} back to version ${target}: its secrets differ from the ones serving now (${changed.join(", ")}).`,
    "Rolling back would bring their old values back: after a rotated REGIONAL_SHARED_SECRET the pools refuse every",
    "forward (401) and unsure rows degrade; a removed API key would work again.",
    `Instead, deploy that version's code again (it takes today's secrets)${tag ? `: it was built from ${tag}` : ""}:`,
    `  git checkout ${tag ?? "<its commit>"} && npm run deploy -- --env ${env}`,
    `or, knowing what comes back, npm run deploy -- --env ${env} --rollback --restore-old-secrets`,
  ].join("\n");
}
