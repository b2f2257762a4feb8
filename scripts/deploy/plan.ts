/**
 * What `npm run deploy` does, as pure functions: the arguments, and the wrangler commands for a plain deploy,
 * a gradual deploy with Worker versions, and a rollback. scripts/deploy.ts runs them.
 *
 * A gradual deploy uploads the Worker as a new version (`wrangler versions upload`) and splits traffic between
 * it and the version serving now (`wrangler versions deploy new@P% old@(100-P)%`); running it again with
 * `--version-id <new> --percent Q` moves the split, and `--percent 100` finishes it. `--rollback` returns
 * to the last version that served 100% (`wrangler rollback`), or to `--version-id`.
 */

export const USAGE = `usage: npm run deploy -- --env <region> [options]

  (no mode)           wrangler deploy: the new Worker serves 100% at once; other options pass to wrangler
  --percent P         upload a new version and send it P% of traffic (1-100); the version serving now keeps the rest
  --version-id ID     with --percent: move an already uploaded version to P% instead of uploading;
                      with --rollback: the version to return to
  --rollback          return to the last version that served 100% of traffic
  --message TEXT      recorded with the version and the deployment
  --dry-run           with --percent or --rollback: print the wrangler commands, run nothing;
                      alone: wrangler deploy --dry-run (bundle only: prints size and bindings)`;

/** Regions deployable from wrangler.toml: its `[env.<name>]` tables. */
export function deployableEnvs(toml: string): string[] {
  return [...toml.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]!);
}

export type DeployRequest =
  /** `wrangler deploy --env`, with the remaining arguments passed through. */
  | { mode: "deploy"; env: string; wranglerArgs: string[] }
  | {
      mode: "gradual";
      env: string;
      percent: number;
      /** An uploaded version to move to `percent`; absent: upload the working tree as a new version. */
      versionId?: string;
      message: string;
      dryRun: boolean;
      /** Passed to `wrangler versions upload` (e.g. `--var`, `--outdir`). */
      wranglerArgs: string[];
    }
  | { mode: "rollback"; env: string; versionId?: string; message: string; dryRun: boolean };

/** Our arguments, validated; errors name the flag. */
export function parseDeployArgs(argv: readonly string[], envs: readonly string[]): DeployRequest {
  const rest: string[] = [];
  let env: string | undefined;
  let percent: string | undefined;
  let versionId: string | undefined;
  let message: string | undefined;
  let rollback = false;
  let dryRun = false;
  const value = (i: number, flag: string): string => {
    const v = argv[i];
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value\n${USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    const take = () => inline ?? value(++i, flag);
    if (flag === "--env" || flag === "-e") env = take();
    else if (flag === "--percent") percent = take();
    else if (flag === "--version-id") versionId = take();
    else if (flag === "--message") message = take();
    else if (arg === "--rollback") rollback = true;
    else if (arg === "--dry-run") {
      dryRun = true;
      rest.push(arg);
    } else rest.push(arg);
  }
  if (!env) throw new Error(`--env is required (one of ${envs.join(", ")})\n${USAGE}`);
  if (!envs.includes(env)) throw new Error(`unknown environment "${env}"; wrangler.toml has ${envs.join(", ")}`);
  if (versionId !== undefined && !/^[0-9a-f-]{8,}$/i.test(versionId)) {
    throw new Error(`--version-id must be a Worker version ID (as wrangler versions list shows), got "${versionId}"`);
  }
  const wranglerArgs = rest.filter((a) => a !== "--dry-run");
  if (rollback) {
    if (percent !== undefined) throw new Error("--rollback and --percent exclude each other");
    if (wranglerArgs.length) throw new Error(`--rollback takes no other arguments, got ${wranglerArgs.join(" ")}`);
    return { mode: "rollback", env, versionId, message: message ?? `rollback of ${env}`, dryRun };
  }
  if (percent !== undefined) {
    const p = /^\d+$/.test(percent) ? Number(percent) : Number.NaN;
    if (!(p >= 1 && p <= 100)) throw new Error(`--percent must be an integer from 1 to 100, got "${percent}"`);
    return {
      mode: "gradual",
      env,
      percent: p,
      ...(versionId ? { versionId } : {}),
      message: message ?? `${env}: ${versionId ? "move" : "new"} version to ${p}%`,
      dryRun,
      wranglerArgs,
    };
  }
  if (versionId !== undefined) throw new Error("--version-id needs --percent or --rollback");
  return { mode: "deploy", env, wranglerArgs: message === undefined ? rest : [...rest, "--message", message] };
}

/** One entry of `wrangler deployments status --json`: which versions serve, with their share of traffic. */
export interface LiveDeployment {
  versions: { version_id: string; percentage: number }[];
}

/** `wrangler deployments status --json`, checked. */
export function parseDeploymentStatus(json: string): LiveDeployment {
  const data = JSON.parse(json) as Partial<LiveDeployment>;
  const versions = data.versions;
  if (
    !Array.isArray(versions) ||
    versions.length === 0 ||
    !versions.every((v) => typeof v?.version_id === "string" && typeof v.percentage === "number")
  ) {
    throw new Error(`unexpected answer from wrangler deployments status: ${json.slice(0, 200)}`);
  }
  return { versions };
}

/** The version ID `wrangler versions upload` reported in its output file (WRANGLER_OUTPUT_FILE_PATH, ND-JSON). */
export function uploadedVersionId(outputFile: string): string {
  for (const line of outputFile.split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { type?: string; version_id?: string };
    if (entry.type === "version-upload" && entry.version_id) return entry.version_id;
  }
  throw new Error("wrangler versions upload reported no version ID");
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
  status: (env: string) => ["deployments", "status", "--env", env, "--json"],
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
  rollback: (env: string, versionId: string | undefined, message: string) => [
    "rollback",
    ...(versionId ? [versionId] : []),
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
