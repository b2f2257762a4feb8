/**
 * What `npm run deploy` does, step by step, each step printed (`==> name: what was found`) before wrangler or
 * Cloudflare's API is asked to act: secrets, edge models, KV namespaces, residency, pool certificates, Custom
 * Domains, then the upload, the traffic split and the triggers. The rules are the pure functions beside this
 * file; a rehearsal (rehearsal/rehearse.ts) runs exactly this against a stand-in for the API.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { EDGE_BUILD_DIR, generateModels, MODELS_DIR, ROOT } from "../edge-bundle/build-edge.ts";
import {
  checkKvNamespaces,
  customDomainTakeovers,
  ensureRegionalHostnames,
  liveDeployment,
  type Route,
  rollBack,
  rollbackPlan,
  workerSecrets,
} from "./account-checks.ts";
import { type CloudflareClient, cloudflareClient } from "./cloudflare-client.ts";
import { withKvNamespaceIds, withoutRequiredSecrets, withoutRoutes } from "./config-edits.ts";
import { changesetSummary, takeoverRefusal } from "./custom-domains.ts";
import { edgeSettingsProblem } from "./edge-settings.ts";
import { poolCertificateProblems } from "./hostnames.ts";
import { modelKey } from "./model-key.ts";
import {
  type DeployRequest,
  gradualSplit,
  type LiveDeployment,
  missingSecrets,
  parseSecretsFile,
  secretsMessage,
  shellLine,
  uploadedVersionId,
  wranglerCommand,
} from "./plan.ts";
import { poolsOutside, regionsOf, residencyOf } from "./residency.ts";
import { wrangler } from "./wrangler.ts";

/** Placeholders a dry run prints where wrangler's answers would go. */
const UPLOADED = "<uploaded-version-id>";
const STABLE: LiveDeployment = { versions: [{ version_id: "<serving-version-id>", percentage: 100 }] };

type Uploading = Extract<DeployRequest, { wranglerArgs: string[] }>;

const step = (name: string, detail: string) => console.error(`==> ${name}: ${detail}`);
const note = (line: string) => console.error(line);

export interface DeployOptions {
  /** KV namespace ids to bind instead of wrangler.toml's (the rehearsal's, made on its stand-in). */
  kvIds?: Readonly<Record<string, string>>;
}

/** The environment as wrangler reads it from wrangler.toml. */
export interface EnvConfig {
  name: string;
  accountId: string | undefined;
  vars: Record<string, unknown>;
  required: string[];
  routes: Route[];
  kvNamespaces: { binding: string; id?: string }[];
  crons: string[];
  /** The R2 buckets the environment binds (the model registry's). */
  r2Buckets: string[];
}

export async function envConfig(env: string, kvIds: Readonly<Record<string, string>> = {}): Promise<EnvConfig> {
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env });
  return {
    name: config.name ?? `edgecascade-${env}`,
    accountId: config.account_id,
    vars: config.vars,
    required: config.secrets?.required ?? [],
    routes: (config.routes ?? []).filter((r: unknown): r is Route => typeof r === "object"),
    kvNamespaces: config.kv_namespaces.map((n: { binding: string; id?: string }) => ({
      binding: n.binding,
      id: kvIds[n.binding] ?? n.id,
    })),
    crons: config.triggers.crons ?? [],
    r2Buckets: (config.r2_buckets ?? []).flatMap((b: { bucket_name?: string }) =>
      b.bucket_name ? [b.bucket_name] : [],
    ),
  };
}

/**
 * `--secrets-file` as an absolute path: relative to where npm was run (INIT_CWD), as the user typed it, since
 * npm runs this script, and it runs wrangler, in the project root.
 */
const secretsPath = (request: Uploading) =>
  request.secretsFile ? resolve(process.env.INIT_CWD ?? process.cwd(), request.secretsFile) : undefined;

function secretsIn(request: Uploading): Record<string, string> {
  const path = secretsPath(request);
  if (!path) return {};
  try {
    return parseSecretsFile(readFileSync(path, "utf8"), process.env);
  } catch (err) {
    throw new Error(`--secrets-file ${request.secretsFile}: ${(err as Error).message}`);
  }
}

/** The commit a version is built from, recorded as its tag (what a refused rollback tells to deploy again). */
function versionTag(): string | undefined {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: "pipe",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: "pipe",
    });
    return dirty.trim() ? `${commit}-dirty` : commit;
  } catch {
    return undefined;
  }
}

/**
 * Never open, never unsigned: the required secrets the new code would run without. Refuses (throws) when any is
 * missing, unless --allow-open, which warns and returns them. Also says whether the Worker exists yet.
 */
async function checkSecrets(
  request: Uploading,
  cfg: EnvConfig,
  api: CloudflareClient,
): Promise<{ open: string[]; onWorker: string[]; exists: boolean }> {
  const inFile = Object.keys(secretsIn(request));
  const { exists, names: onWorker } = await workerSecrets(api, cfg.name);
  const missing = missingSecrets(cfg.required, { onWorker, inFile, vars: Object.keys(cfg.vars) });
  if (missing.length === 0) {
    const where = [
      onWorker.length ? `on the Worker: ${onWorker.join(", ")}` : exists ? "none on the Worker" : "no Worker yet",
      ...(inFile.length ? [`in --secrets-file: ${inFile.join(", ")}`] : []),
    ];
    step("secrets", `${cfg.required.join(", ") || "none required"} set (${where.join("; ")})`);
    return { open: [], onWorker, exists };
  }
  if (!request.allowOpen) throw new Error(secretsMessage(request.env, missing, false));
  note(secretsMessage(request.env, missing, true));
  return { open: missing, onWorker, exists };
}

/** The vars (and the secrets file's values) read as the Worker will read them: a bad one stops the deploy, named. */
function checkSettings(request: Uploading, cfg: EnvConfig): void {
  const problem = edgeSettingsProblem(request.env, cfg.vars, secretsIn(request));
  if (problem) throw new Error(problem);
  step("settings", `${request.env}'s vars read as its Worker reads them`);
}

/** The edge models pass the checks the Worker will run, against the key the Worker will hold. */
async function checkEdgeModels(request: Uploading, cfg: EnvConfig, onWorker: string[] | undefined): Promise<void> {
  const fromVars = cfg.vars.MODEL_PUBLIC_KEY;
  const key = modelKey({
    env: request.env,
    fromFile: secretsIn(request).MODEL_PUBLIC_KEY,
    fromVars: typeof fromVars === "string" && fromVars !== "" ? fromVars : undefined,
    onWorker,
    shell: process.env.MODEL_PUBLIC_KEY || undefined,
  });
  // Imported here, as the model module generator is: only commands that bundle need the model code.
  const { verifyEdgeModels } = await import("./verify-models.ts");
  const checked = await verifyEdgeModels(MODELS_DIR, key.key);
  if (key.key) {
    step("edge models", `signed and intact: ${checked.join(", ")} (key from ${key.from})`);
    return;
  }
  step(
    "edge models",
    `MODEL SIGNATURES NOT VERIFIED for ${request.env} (${key.from}): ${checked.join(", ")} checked against their sha256 only`,
  );
  if ("shellKeyIgnored" in key && key.shellKeyIgnored)
    note(`  (the shell's MODEL_PUBLIC_KEY is not ${request.env}'s: its Worker holds none)`);
}

/** KV, residency, pool certificates and Custom Domains, asked of Cloudflare before anything is uploaded. */
async function checkAccount(
  request: Uploading,
  cfg: EnvConfig,
  api: CloudflareClient,
  workerExists: boolean,
): Promise<void> {
  step("kv namespaces", (await checkKvNamespaces(api, request.env, cfg.kvNamespaces)).join(", ") || "none bound");
  const residency = residencyOf(cfg.vars);
  if (residency) {
    const outside = poolsOutside(regionsOf(cfg.vars), residency);
    if (outside.length > 0) {
      throw new Error(
        `refusing to deploy ${request.env}: DATA_RESIDENCY=${residency.name}, but REGIONS has ${outside.join(", ")}`,
      );
    }
    step("residency", (await ensureRegionalHostnames(api, request.env, residency, cfg.routes)).join(", "));
  }
  const zones = cfg.routes.flatMap((r) => (r.zone_name ? [r.zone_name] : []));
  const problems = poolCertificateProblems(regionsOf(cfg.vars), zones);
  step(
    "pool certificates",
    problems.length ? `WARNING:\n  ${problems.join("\n  ")}` : "every pool host is covered by its zone's Universal SSL",
  );
  if (workerExists) await checkCustomDomains(request, cfg, api);
}

async function checkCustomDomains(request: Uploading, cfg: EnvConfig, api: CloudflareClient): Promise<void> {
  const { changeset, found } = await customDomainTakeovers(api, cfg.name, cfg.routes);
  if (found.length > 0 && !request.takeOverDns) throw new Error(takeoverRefusal(request.env, found));
  step(
    "custom domains",
    `${changesetSummary(changeset)}${found.length ? ` (--take-over-dns: replacing ${found.map((f) => `${f.hostname}'s ${f.what}`).join("; ")})` : ""}`,
  );
}

/**
 * wrangler's arguments for a command that bundles the Worker: the generated config that aliases its models
 * (edited when the deploy needs: secrets left open, routes held back, the rehearsal's KV ids), the secrets file,
 * the version's tag.
 */
async function bundling(
  request: Uploading,
  edits: { open?: readonly string[]; withoutRoutes?: boolean; kvIds?: Readonly<Record<string, string>> } = {},
): Promise<{ args: string[]; config: string }> {
  const [flag, generated] = await generateModels(MODELS_DIR, EDGE_BUILD_DIR, "deployed");
  let config = generated!;
  if (edits.open?.length || edits.withoutRoutes || edits.kvIds) {
    let toml = readFileSync(generated!, "utf8");
    if (edits.open?.length) toml = withoutRequiredSecrets(toml, request.env, edits.open);
    if (edits.kvIds) toml = withKvNamespaceIds(toml, request.env, edits.kvIds);
    if (edits.withoutRoutes) toml = withoutRoutes(toml, request.env);
    // Beside the generated one (relative paths in it stay right); gitignored as .wrangler-models-*.toml.
    config = join(
      ROOT,
      `.wrangler-models-${edits.withoutRoutes ? "first" : edits.open?.length ? "open" : "deploy"}.toml`,
    );
    writeFileSync(config, toml);
  }
  const path = secretsPath(request);
  const tag = request.dryRun ? undefined : versionTag();
  // wrangler runs in ROOT: the relative path reads better in dry runs and logs.
  return {
    config: relative(ROOT, config),
    args: [
      flag!,
      relative(ROOT, config),
      ...(path ? ["--secrets-file", path] : []),
      ...(tag ? ["--tag", tag] : []),
      ...request.wranglerArgs,
    ],
  };
}

/** Runs wrangler with WRANGLER_OUTPUT_FILE_PATH and returns the version ID it reported. */
async function runReportingVersion(args: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-deploy-"));
  try {
    const outputFile = join(dir, "wrangler-output.json");
    await wrangler.run(args, { WRANGLER_OUTPUT_FILE_PATH: outputFile });
    return uploadedVersionId(readFileSync(outputFile, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const apiFor = (cfg: EnvConfig) => cloudflareClient(process.env, cfg.accountId, note);

/** Runs the request; resolves with what goes to stdout (the version that serves, or the dry run's commands). */
export async function runDeploy(request: DeployRequest, options: DeployOptions = {}): Promise<string[]> {
  const { env } = request;
  const printed: string[] = [];
  const print = (args: string[]) => printed.push(`wrangler ${shellLine(args)}`);
  const cfg = await envConfig(env, options.kvIds);

  const scriptPath = `/accounts/<account>/workers/scripts/${cfg.name}`;
  if (request.mode === "rollback") {
    if (request.dryRun) {
      return [
        `cloudflare-api GET ${scriptPath}/deployments`,
        `cloudflare-api POST ${scriptPath}/deployments ${request.versionId ?? "<the last version that served 100%>"}@100% (refused by Cloudflare if its secrets differ from today's${request.restoreOldSecrets ? "; then forced: --restore-old-secrets" : ""})`,
      ];
    }
    const api = apiFor(cfg);
    const plan = await rollbackPlan(api, cfg.name, request.versionId);
    step("rollback", `to ${plan.target}${plan.tag ? ` (built from ${plan.tag})` : ""}`);
    await rollBack(api, env, cfg.name, plan, request.message, request.restoreOldSecrets, note);
    step("rollback", `${plan.target} serves 100% of ${env}`);
    return [plan.target];
  }

  if (request.mode === "deploy") {
    if (request.dryRun) {
      // A dry run only bundles (no credentials needed): the secrets and the account are checked for real only.
      checkSettings(request, cfg);
      await checkEdgeModels(request, cfg, undefined);
      await wrangler.run(wranglerCommand.deploy(env, (await bundling(request)).args));
      return [];
    }
    checkSettings(request, cfg);
    const api = apiFor(cfg);
    const { open, onWorker, exists } = await checkSecrets(request, cfg, api);
    await checkEdgeModels(request, cfg, onWorker);
    await checkAccount(request, cfg, api, exists);
    const { args } = await bundling(request, { open, kvIds: options.kvIds, withoutRoutes: !exists });
    const version = await runReportingVersion(wranglerCommand.deploy(env, args));
    step("worker", `${cfg.name} version ${version} serves 100%${exists ? "" : " (a new Worker)"}`);
    if (!exists) {
      // A new Worker: only now can Cloudflare say what its Custom Domains would take over.
      await checkCustomDomains(request, cfg, api).catch((err: Error) => {
        throw new Error(
          `${err.message}\n(${cfg.name} is uploaded and serves no hostname yet: deploy again once the hostname is free.)`,
        );
      });
      const { config } = await bundling(request, { open, kvIds: options.kvIds });
      await wrangler.run(wranglerCommand.triggers(env, config));
      step("triggers", `Custom Domains ${cfg.routes.map((r) => r.pattern).join(", ")} and the cron attached`);
    }
    return [version];
  }

  if (request.dryRun) {
    printed.push(`cloudflare-api GET ${scriptPath}/deployments`);
    if (!request.versionId) {
      printed.push(`cloudflare-api GET ${scriptPath}/secrets`);
      await checkEdgeModels(request, cfg, undefined);
      print(wranglerCommand.upload(env, request.message, (await bundling(request)).args));
    }
    const live = request.versionId
      ? { versions: [...STABLE.versions, { version_id: request.versionId, percentage: 0 }] }
      : STABLE;
    print(
      wranglerCommand.split(env, gradualSplit(live, request.versionId ?? UPLOADED, request.percent), request.message),
    );
    print(wranglerCommand.triggers(env));
    return printed;
  }
  // Check the split before uploading anything: a refused split should not leave a stray version behind.
  const api = apiFor(cfg);
  const live = await liveDeployment(api, cfg.name);
  step("serving", live.versions.map((v) => `${v.version_id}@${v.percentage}%`).join(", "));
  gradualSplit(live, request.versionId ?? UPLOADED, request.percent);
  let candidate = request.versionId;
  if (!candidate) {
    checkSettings(request, cfg);
    const { open, onWorker } = await checkSecrets(request, cfg, api);
    await checkEdgeModels(request, cfg, onWorker);
    await checkAccount(request, cfg, api, true);
    candidate = await runReportingVersion(
      wranglerCommand.upload(env, request.message, (await bundling(request, { open, kvIds: options.kvIds })).args),
    );
    step("upload", `version ${candidate}`);
  } else {
    await checkCustomDomains(request, cfg, api);
  }
  await wrangler.run(wranglerCommand.split(env, gradualSplit(live, candidate, request.percent), request.message));
  // Versions carry code, bindings and secrets, not routes, Custom Domains or crons: apply those too.
  await wrangler.run(wranglerCommand.triggers(env));
  step(
    "split",
    request.percent < 100
      ? `${candidate} serves ${request.percent}% of ${env}. Next: npm run deploy -- --env ${env} --version-id ${candidate} --percent <P>, or --rollback`
      : `${candidate} serves 100% of ${env}`,
  );
  return [candidate];
}
