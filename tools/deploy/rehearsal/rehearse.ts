/**
 * `npm run deploy -- --env <env> --rehearse [--secrets-file F]`: the environment's first deploy, walked through
 * on this machine. A stand-in for Cloudflare's API (cloudflare-api.ts) plays an empty account with the
 * environment's zone in it; wrangler and the deploy's own checks talk to it through CLOUDFLARE_API_BASE_URL.
 * Then, in the order of docs/deploy.md: the KV namespace (`wrangler kv namespace create`, its id used instead of
 * wrangler.toml's), and the deploy itself (steps.ts, the same code as the real one: secrets, edge models, KV,
 * residency, pool certificates, the Worker, its Custom Domains, the cron). What the account holds afterwards is
 * checked and printed; last, the probe runs as the scheduled probe would, against `npm start`'s local stack with
 * the environment's secrets (local-probe.ts). Exits non-zero where the real deploy would stop, or where the
 * account does not end up as the environment says.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isPlaceholderId } from "../config-edits.ts";
import { type DeployRequest, parseSecretsFile, wranglerCommand } from "../plan.ts";
import { regionsOf, residencyOf } from "../residency.ts";
import { envConfig, runDeploy } from "../steps.ts";
import { wrangler } from "../wrangler.ts";
import type { Account } from "./cloudflare-account.ts";
import { startCloudflareApi } from "./cloudflare-api.ts";
import { probeKeyProblem, probeLocalStack } from "./local-probe.ts";

type Rehearsal = Extract<DeployRequest, { mode: "deploy" }>;

/** How long the probe runs against the local stack. */
const PROBE_SECONDS = 3;

const step = (name: string, detail: string) => console.error(`==> ${name}: ${detail}`);

/** `wrangler kv namespace create` prints the binding to add: `id = "<id>"`. */
export function createdNamespaceId(output: string): string {
  const id = output.match(/^id = "([^"]+)"$/m)?.[1];
  if (!id) throw new Error(`wrangler kv namespace create printed no id:\n${output}`);
  return id;
}

/** What the account must hold after the environment's first deploy; each problem, or [] . */
export function accountProblems(
  account: Account,
  expected: {
    script: string;
    secrets: readonly string[];
    kv: Readonly<Record<string, string>>;
    hostnames: readonly string[];
    crons: readonly string[];
    regionKey?: string;
  },
): string[] {
  const s = account.scripts.get(expected.script);
  if (!s) return [`no Worker ${expected.script}`];
  const problems: string[] = [];
  const serving = s.deployments[0]?.versions;
  const version = s.versions.find((v) => v.id === serving?.[0]?.version_id);
  if (!version || serving?.length !== 1 || serving[0]!.percentage !== 100) problems.push("no version serves 100%");
  const bindings = version?.bindings ?? [];
  for (const name of expected.secrets) {
    if (!bindings.some((b) => b.name === name && b.type === "secret_text")) problems.push(`secret ${name} not set`);
  }
  for (const [binding, id] of Object.entries(expected.kv)) {
    if (!bindings.some((b) => b.name === binding && b.type === "kv_namespace" && b.namespace_id === id)) {
      problems.push(`${binding} is not bound to KV namespace ${id}`);
    }
  }
  for (const hostname of expected.hostnames) {
    if (!account.customDomains.some((d) => d.hostname === hostname && d.service === expected.script)) {
      problems.push(`${hostname} is not a Custom Domain of ${expected.script}`);
    }
    if (
      expected.regionKey &&
      !account.regionalHostnames.some((r) => r.hostname === hostname && r.region_key === expected.regionKey)
    ) {
      problems.push(`${hostname} has no Regional Services region ${expected.regionKey}`);
    }
  }
  const crons = s.schedules.map((c) => c.cron).sort();
  if (JSON.stringify(crons) !== JSON.stringify([...expected.crons].sort())) {
    problems.push(`cron schedules ${JSON.stringify(crons)}, expected ${JSON.stringify(expected.crons)}`);
  }
  return problems;
}

export async function rehearse(request: Rehearsal): Promise<number> {
  const { env } = request;
  const cfg = await envConfig(env);
  const zones = [...new Set(cfg.routes.map((r) => r.zone_name ?? r.pattern.split(".").slice(-2).join(".")))];
  const residency = residencyOf(cfg.vars);
  const api = await startCloudflareApi({
    zones: zones.map((name) => ({ name, regionalServices: residency !== undefined })),
  });
  const scratch = mkdtempSync(join(tmpdir(), "edgecascade-rehearsal-"));
  console.error(
    [
      "",
      `REHEARSAL of ${env}'s first deploy, against a stand-in for Cloudflare's API at ${api.baseUrl}: an empty account`,
      `with the zone ${zones.join(", ")}${residency ? " (Regional Services enabled: your real zone needs the Data Localization Suite)" : ""}.`,
      "Nothing leaves this machine. Each step prints as the real deploy prints it.",
      "",
    ].join("\n"),
  );
  // wrangler and the deploy's own API calls go to the stand-in, with its credentials; wrangler's config and
  // logs to a scratch directory, so that a login of this machine is never used.
  Object.assign(process.env, {
    CLOUDFLARE_API_BASE_URL: api.baseUrl,
    CLOUDFLARE_API_TOKEN: "rehearsal-token",
    CLOUDFLARE_ACCOUNT_ID: api.account.id,
    XDG_CONFIG_HOME: scratch,
    WRANGLER_SEND_METRICS: "false",
  });
  try {
    const secretsFile = request.secretsFile
      ? parseSecretsFile(
          readFileSync(resolve(process.env.INIT_CWD ?? process.cwd(), request.secretsFile), "utf8"),
          process.env,
        )
      : {};
    const probeProblem = probeKeyProblem(secretsFile.API_KEYS, process.env.EDGECASCADE_API_KEY || undefined);
    if (probeProblem) throw new Error(`the scheduled probe's key: ${probeProblem}`);

    const kvIds: Record<string, string> = {};
    for (const { binding, id } of cfg.kvNamespaces) {
      const made = createdNamespaceId(await wrangler.read(wranglerCommand.kvCreate(env, binding)));
      kvIds[binding] = made;
      step(
        "kv namespaces",
        `${binding}: created ${made}${id && isPlaceholderId(id) ? ` (wrangler.toml has the placeholder ${id})` : ` (in place of wrangler.toml's ${id})`}`,
      );
    }

    // The model registry's bucket, made before the Worker that binds it (wrangler refuses a binding to none).
    for (const bucket of cfg.r2Buckets) {
      await wrangler.read(wranglerCommand.r2Create(bucket));
      step("r2 buckets", `${bucket}: created (the model registry, docs/deploy.md "The model registry")`);
    }

    await runDeploy(request, { kvIds });

    const problems = accountProblems(api.account, {
      script: cfg.name,
      secrets: cfg.required.filter((n) => n in secretsFile || n in cfg.vars),
      kv: kvIds,
      hostnames: cfg.routes.filter((r) => r.custom_domain).map((r) => r.pattern),
      crons: cfg.crons,
      ...(residency ? { regionKey: residency.regionKey } : {}),
    });
    if (problems.length) throw new Error(`the account does not hold what ${env} needs:\n  ${problems.join("\n  ")}`);
    const s = api.account.scripts.get(cfg.name)!;
    const version = s.versions.at(-1)!;
    step(
      "account",
      `${cfg.name} version ${version.id} serves 100%; secrets ${version.bindings
        .filter((b) => b.type === "secret_text")
        .map((b) => b.name)
        .join(
          ", ",
        )}; ${cfg.routes.map((r) => r.pattern).join(", ")}; cron ${s.schedules.map((c) => c.cron).join(", ")}; ${regionsOf(cfg.vars).length} pools`,
    );

    const probe = await probeLocalStack(secretsFile, process.env.EDGECASCADE_API_KEY || undefined, PROBE_SECONDS, (l) =>
      console.error(l),
    );
    if (probe.completed === 0 || probe.errors > 0) {
      throw new Error(
        `the probe against the local stack got ${probe.errors} errors of ${probe.sent} requests:\n  ${probe.errorSamples.slice(0, 5).join("\n  ")}`,
      );
    }
    step("probe", `${probe.completed} of ${probe.sent} requests answered, no errors, with the probe's key`);
    console.error(`\nrehearsal of ${env}: every step passed`);
    return 0;
  } finally {
    await api.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
