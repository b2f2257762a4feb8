/**
 * What `npm run deploy` does, as pure functions: the arguments, the secrets check, and the wrangler commands
 * for a plain deploy, a gradual deploy with Worker versions, and a rollback. tools/deploy.ts runs them.
 *
 * Never open, never unsigned: before anything is uploaded, the environment's required secrets
 * (`[env.<name>.secrets] required` in wrangler.toml) must be set on the Worker (Cloudflare lists them), given
 * in `--secrets-file` (uploaded with the version, so a first deploy is never served without them), or be a
 * var of the environment. `--allow-open` is the only way past, and says so loudly.
 *
 * A gradual deploy uploads the Worker as a new version (`wrangler versions upload`) and splits traffic between
 * it and the version serving now (`wrangler versions deploy new@P% old@(100-P)%`); running it again with
 * `--version-id <new> --percent Q` moves the split, and `--percent 100` finishes it. `--rollback` returns
 * to the last version that served 100% (`wrangler rollback`'s choice), or to `--version-id`, but never to one
 * whose secrets differ from today's unless told (rollback.ts).
 */

import { UsageError } from "../cli/errors.ts";
import { type FlagTable, type FlagValues, parseFlags } from "../cli/flags.ts";

/** `npm run deploy`'s own flags; whatever else is given passes to wrangler. */
export const DEPLOY_FLAGS = {
  env: {
    type: "string",
    short: "e",
    placeholder: "NAME",
    help: "the environment of wrangler.toml to deploy (required)",
  },
  percent: {
    type: "number",
    placeholder: "P",
    min: 1,
    max: 100,
    integer: true,
    help: "upload a new version and send it P% of traffic (1-100); the version serving now keeps the rest",
  },
  "version-id": {
    type: "string",
    placeholder: "ID",
    help: "with --percent: move an already uploaded version to P% instead of uploading;\nwith --rollback: the version to return to",
  },
  rollback: { type: "boolean", help: "return to the last version that served 100% of traffic" },
  message: { type: "string", placeholder: "TEXT", help: "recorded with the version and the deployment" },
  "secrets-file": {
    type: "string",
    placeholder: "F",
    help:
      "secrets to upload with the Worker or version (JSON or .env, as wrangler takes it); the\n" +
      "first deploy of an environment sets its secrets this way",
  },
  "allow-open": {
    type: "boolean",
    help:
      "deploy even though required secrets are missing: the Worker answers anyone (no\n" +
      "API_KEYS), sends unsigned calls the pools refuse, or loads unsigned models",
  },
  "take-over-dns": {
    type: "boolean",
    help:
      "let the environment's Custom Domains replace a DNS record, or another Worker's Custom\n" +
      "Domain, that is on their hostname now (without it the deploy refuses and names them)",
  },
  "restore-old-secrets": {
    type: "boolean",
    help:
      "with --rollback: return even to a version whose secrets differ from today's (their old\n" +
      "values come back: a rotated REGIONAL_SHARED_SECRET makes the pools refuse every forward)",
  },
  rehearse: {
    type: "boolean",
    help:
      "walk the environment's first deploy against a stand-in for Cloudflare's API on this\n" +
      "machine (secrets, Worker, KV, Custom Domains, cron), then probe npm start's local stack\n" +
      "with its secrets and the probe's key (EDGECASCADE_API_KEY); nothing leaves the machine",
  },
  "dry-run": {
    type: "boolean",
    help:
      "with --percent or --rollback: print the commands and API calls, run nothing;\n" +
      "alone: wrangler deploy --dry-run (bundle only: prints size and bindings)",
  },
} as const satisfies FlagTable;

export const DEPLOY_USAGE = "npm run deploy -- --env <environment> [options]";
export const DEPLOY_DESCRIPTION =
  "Without --percent or --rollback: wrangler deploy, the new Worker serves 100% at once; other options pass to wrangler.";

/** Regions deployable from wrangler.toml: its `[env.<name>]` tables. */
export function deployableEnvs(toml: string): string[] {
  return [...toml.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]!);
}

/** What every mode that puts code in front of traffic carries: how its secrets are checked. */
interface SecretsOptions {
  /** `--secrets-file`: uploaded with the Worker or version; its names count as set. */
  secretsFile?: string;
  /** `--allow-open`: deploy even though required secrets are missing. */
  allowOpen: boolean;
  /** `--take-over-dns`: Custom Domains may replace what is on their hostnames now. */
  takeOverDns: boolean;
}

export type DeployRequest =
  /** `wrangler deploy --env`, with the remaining arguments passed through; `rehearse`: against stand-ins. */
  | ({ mode: "deploy"; env: string; dryRun: boolean; rehearse: boolean; wranglerArgs: string[] } & SecretsOptions)
  | ({
      mode: "gradual";
      env: string;
      percent: number;
      /** An uploaded version to move to `percent`; absent: upload the working tree as a new version. */
      versionId?: string;
      message: string;
      dryRun: boolean;
      /** Passed to `wrangler versions upload` (e.g. `--var`, `--outdir`). */
      wranglerArgs: string[];
    } & SecretsOptions)
  | {
      mode: "rollback";
      env: string;
      versionId?: string;
      message: string;
      dryRun: boolean;
      /** `--restore-old-secrets`: deploy the version even though its secrets differ from today's. */
      restoreOldSecrets: boolean;
    };

/** Our arguments, validated; errors name the flag. */
export function parseDeployArgs(argv: readonly string[], envs: readonly string[]): DeployRequest {
  const { values, rest } = parseFlags(DEPLOY_FLAGS, argv, { passThrough: true });
  return deployRequest(values, rest, envs);
}

/** The parsed flags checked together; `rest` is what passes to wrangler. */
export function deployRequest(
  values: FlagValues<typeof DEPLOY_FLAGS>,
  rest: readonly string[],
  envs: readonly string[],
): DeployRequest {
  const {
    env,
    percent,
    "version-id": versionId,
    message,
    "secrets-file": secretsFile,
    "allow-open": allowOpen,
    "take-over-dns": takeOverDns,
    "restore-old-secrets": restoreOldSecrets,
    rehearse,
    rollback,
    "dry-run": dryRun,
  } = values;
  if (!env) throw new UsageError(`--env is required (one of ${envs.join(", ")})`);
  if (!envs.includes(env)) throw new UsageError(`unknown environment "${env}"; wrangler.toml has ${envs.join(", ")}`);
  if (versionId !== undefined && !/^[0-9a-f-]{8,}$/i.test(versionId)) {
    throw new UsageError(
      `--version-id must be a Worker version ID (as wrangler versions list shows), got "${versionId}"`,
    );
  }
  const wranglerArgs = [...rest];
  const secrets: SecretsOptions = {
    ...(secretsFile !== undefined ? { secretsFile } : {}),
    allowOpen,
    takeOverDns,
  };
  if (restoreOldSecrets && !rollback) throw new UsageError("--restore-old-secrets goes with --rollback");
  if (rehearse && (rollback || percent !== undefined || dryRun)) {
    throw new UsageError("--rehearse walks a first deploy: not with --rollback, --percent or --dry-run");
  }
  if (rollback) {
    if (percent !== undefined) throw new UsageError("--rollback and --percent exclude each other");
    // A rollback returns to a version that was deployed with its own secrets; it uploads none.
    if (secretsFile !== undefined || allowOpen || takeOverDns)
      throw new UsageError("--rollback takes no --secrets-file, --allow-open or --take-over-dns");
    if (wranglerArgs.length) throw new UsageError(`--rollback takes no other arguments, got ${wranglerArgs.join(" ")}`);
    return {
      mode: "rollback",
      env,
      ...(versionId ? { versionId } : {}),
      message: message ?? `rollback of ${env}`,
      dryRun,
      restoreOldSecrets,
    };
  }
  if (percent !== undefined) {
    if (versionId !== undefined && secretsFile !== undefined) {
      throw new UsageError(
        "--secrets-file goes with the upload of a new version, not with --version-id (already uploaded)",
      );
    }
    return {
      mode: "gradual",
      env,
      percent,
      ...(versionId ? { versionId } : {}),
      message: message ?? `${env}: ${versionId ? "move" : "new"} version to ${percent}%`,
      dryRun,
      wranglerArgs,
      ...secrets,
    };
  }
  if (versionId !== undefined) throw new UsageError("--version-id needs --percent or --rollback");
  return {
    mode: "deploy",
    env,
    dryRun,
    rehearse,
    // wrangler deploy --dry-run bundles only.
    wranglerArgs: [...(dryRun ? ["--dry-run"] : []), ...rest, ...(message === undefined ? [] : ["--message", message])],
    ...secrets,
  };
}

/**
 * A secrets file as wrangler's `--secrets-file` reads it: a JSON object, or .env lines `NAME=value`
 * (`export ` allowed, `#` comments, values optionally quoted), in which, as wrangler 4.164 does
 * (`parseAndExpandDotEnv`), a variable of the deploying shell (`shell`) overrides a name the file has. Values
 * are returned for MODEL_PUBLIC_KEY, which the deploy checks the edge models against; nothing prints them.
 */
export function parseSecretsFile(
  text: string,
  shell: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    const data = JSON.parse(trimmed) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(data).filter((e): e is [string, string] => typeof e[1] === "string" && e[1] !== ""),
    );
  }
  const secrets: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = line.match(/^\s*(?:export\s+)?([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*$/);
    if (!m) continue;
    const value = shell[m[1]!] ?? m[2]!.replace(/^(["'])(.*)\1$/, "$2");
    if (value !== "") secrets[m[1]!] = value;
  }
  return secrets;
}

/** Required secrets that are neither set on the Worker, nor in the secrets file, nor vars of the environment. */
export function missingSecrets(
  required: readonly string[],
  present: { onWorker: readonly string[]; inFile: readonly string[]; vars: readonly string[] },
): string[] {
  const set = new Set([...present.onWorker, ...present.inFile, ...present.vars]);
  return required.filter((name) => !set.has(name));
}

/** What a missing secret leaves open, for the refusal and for the --allow-open warning. */
const CONSEQUENCE: Record<string, string> = {
  API_KEYS: "anyone may call the Worker (no API key is checked)",
  REGIONAL_SHARED_SECRET:
    "calls to the pools go unsigned, the pools refuse them with 401 and every unsure answer degrades",
  MODEL_PUBLIC_KEY: "edge models load without a signature check",
};

/** The refusal (or, with --allow-open, the warning) for an environment whose required secrets are missing. */
export function secretsMessage(env: string, missing: readonly string[], allowOpen: boolean): string {
  const lines = missing.map((name) => `  ${name}: ${CONSEQUENCE[name] ?? "required by wrangler.toml"}`);
  if (allowOpen) {
    return [
      "!".repeat(100),
      `!!! --allow-open: deploying ${env} WITHOUT ${missing.join(", ")}:`,
      ...lines.map((l) => `!!! ${l.trim()}`),
      "!".repeat(100),
    ].join("\n");
  }
  return [
    `refusing to deploy ${env}: required secrets are not set (wrangler.toml [env.${env}.secrets] required):`,
    ...lines,
    `Give them with the Worker: npm run deploy -- --env ${env} --secrets-file <file with NAME=value lines>`,
    `(or npx wrangler secret put NAME --env ${env} on a Worker that exists). --allow-open deploys without them.`,
  ].join("\n");
}

/** A deployment: which versions serve, with their share of traffic. */
export interface LiveDeployment {
  versions: { version_id: string; percentage: number }[];
}

/** The deployment serving now (the newest of `GET .../deployments`), checked. */
export function parseDeployment(deployment: unknown): LiveDeployment {
  const versions = (deployment as Partial<LiveDeployment> | undefined)?.versions;
  if (
    !Array.isArray(versions) ||
    versions.length === 0 ||
    !versions.every((v) => typeof v?.version_id === "string" && typeof v.percentage === "number")
  ) {
    throw new Error(`unexpected deployment from Cloudflare: ${JSON.stringify(deployment)?.slice(0, 200)}`);
  }
  return { versions };
}

/**
 * The version ID `wrangler versions upload` or `wrangler deploy` reported in its output file
 * (WRANGLER_OUTPUT_FILE_PATH, ND-JSON: a "version-upload" or "deploy" entry).
 */
export function uploadedVersionId(outputFile: string): string {
  for (const line of outputFile.split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { type?: string; version_id?: string };
    if ((entry.type === "version-upload" || entry.type === "deploy") && entry.version_id) return entry.version_id;
  }
  throw new Error("wrangler reported no version ID");
}

/**
 * The traffic split that sends `candidate` `percent`% and leaves the rest on the stable version: the one
 * serving alone now, or, while a gradual deploy is under way, the one that is not `candidate`. A new version
 * cannot join a split of two others (one of them would silently lose its traffic).
 */
export function gradualSplit(live: LiveDeployment, candidate: string, percent: number): string[] {
  const others = live.versions.filter((v) => v.version_id !== candidate);
  const shown = live.versions.map((v) => `${v.version_id}@${v.percentage}%`).join(", ");
  if (others.length === 0) throw new Error(`${candidate} already serves 100% of traffic`);
  if (others.length > 1) {
    throw new Error(
      `a gradual deploy is under way (${shown}): move it with --version-id <one of them> --percent P, or --rollback`,
    );
  }
  const stable = others[0]!.version_id;
  return percent === 100 ? [`${candidate}@100%`] : [`${candidate}@${percent}%`, `${stable}@${100 - percent}%`];
}

/** wrangler argument lists, one per command. */
export const wranglerCommand = {
  deploy: (env: string, args: readonly string[]) => ["deploy", "--env", env, ...args],
  kvCreate: (env: string, binding: string) => ["kv", "namespace", "create", binding, "--env", env],
  /** The model registry's bucket, which the Worker binds (docs/deploy.md, "The model registry"). */
  r2Create: (bucket: string) => ["r2", "bucket", "create", bucket],
  /** Routes, Custom Domains and crons: `wrangler versions deploy` does not apply them, `wrangler deploy` does. */
  triggers: (env: string, config?: string) => [
    "triggers",
    "deploy",
    "--env",
    env,
    ...(config ? ["--config", config] : []),
  ],
  upload: (env: string, message: string, args: readonly string[]) => [
    "versions",
    "upload",
    "--env",
    env,
    "--message",
    message,
    ...args,
  ],
  split: (env: string, specs: readonly string[], message: string) => [
    "versions",
    "deploy",
    ...specs,
    "--env",
    env,
    "--message",
    message,
    "--yes",
  ],
};

/** A command line as a shell would take it back (for dry runs and logs). */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%./:=-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
