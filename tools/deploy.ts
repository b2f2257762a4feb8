/**
 * `npm run deploy -- --env <name> [--percent P [--version-id ID]] [--rollback] [--secrets-file F] [--allow-open]
 * [--message M] [--dry-run]`: deploys the edge Worker to one of wrangler.toml's environments, at once or
 * gradually with Worker versions. The top level of wrangler.toml is the local stack and is never deployed. No
 * code goes in front of traffic while a required secret is missing (plan.ts), unless `--allow-open`. The Worker
 * serves exactly the models of `models/`: its model module is generated before any command that bundles
 * (deploy, versions upload). What runs is planned by the pure functions of tools/deploy/plan.ts; this file
 * runs wrangler and prints each command first.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defineCommand, runMain } from "./cli/command.ts";
import {
  DEPLOY_DESCRIPTION,
  DEPLOY_FLAGS,
  DEPLOY_USAGE,
  type DeployRequest,
  deployableEnvs,
  deployRequest,
  gradualSplit,
  type LiveDeployment,
  missingSecrets,
  parseDeploymentStatus,
  parseSecretsFile,
  secretsMessage,
  secretsOnWorker,
  shellLine,
  uploadedVersionId,
  withoutRequiredSecrets,
  wranglerCommand,
} from "./deploy/plan.ts";
import { EDGE_BUILD_DIR, generateModels, MODELS_DIR, ROOT } from "./edge-bundle/build-edge.ts";

const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

interface Wrangler {
  /** Run with the terminal attached; rejects on a non-zero exit. */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<void>;
  /** Run and return stdout. */
  read(args: string[]): Promise<string>;
  /** Run and return the exit code and both outputs, whatever the exit. */
  capture(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

const wrangler: Wrangler = {
  run: (args, env) => exec(args, "inherit", env).then(() => undefined),
  read: (args) => exec(args, "pipe").then(({ code, stdout }) => (code === 0 ? stdout : failed(args, code))),
  capture: (args) => exec(args, "capture"),
};

function failed(args: string[], code: number): never {
  throw new Error(`wrangler ${args[0]} failed (exit ${code})`);
}

function exec(
  args: string[],
  output: "inherit" | "pipe" | "capture",
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  console.error(`$ wrangler ${shellLine(args)}`);
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER, args, {
      cwd: ROOT,
      stdio: ["inherit", output === "inherit" ? "inherit" : "pipe", output === "capture" ? "pipe" : "inherit"],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (output === "inherit" && code !== 0) {
        reject(new Error(`wrangler ${args[0]} failed (${signal ?? `exit ${code}`})`));
      } else resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** Placeholders a dry run prints where wrangler's answers would go. */
const UPLOADED = "<uploaded-version-id>";
const STABLE: LiveDeployment = { versions: [{ version_id: "<serving-version-id>", percentage: 100 }] };

type Uploading = Extract<DeployRequest, { wranglerArgs: string[] }>;

/** The environment as wrangler reads it from wrangler.toml: its vars and its required secrets. */
async function envConfig(env: string): Promise<{ vars: Record<string, unknown>; required: string[] }> {
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env });
  return { vars: config.vars, required: config.secrets?.required ?? [] };
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
    return parseSecretsFile(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`--secrets-file ${request.secretsFile}: ${(err as Error).message}`);
  }
}

/**
 * The environment's MODEL_PUBLIC_KEY: the deploying shell's, else the secrets file's, else wrangler.toml's
 * `[env.<env>.vars]`. (A key already kept as a Worker secret cannot be read back: export it for the deploy,
 * or the edge models are checked against their sha256 only.)
 */
async function publicKeyOf(request: Uploading): Promise<string | undefined> {
  if (process.env.MODEL_PUBLIC_KEY) return process.env.MODEL_PUBLIC_KEY;
  const fromFile = secretsIn(request).MODEL_PUBLIC_KEY;
  if (fromFile) return fromFile;
  const value = (await envConfig(request.env)).vars.MODEL_PUBLIC_KEY;
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Never open, never unsigned: the required secrets the new code would run without. Refuses (throws) when any
 * is missing, unless --allow-open, which warns and returns them (they are then dropped from the generated
 * config's `secrets.required`, or wrangler itself would refuse).
 */
async function checkSecrets(request: Uploading): Promise<string[]> {
  const { vars, required } = await envConfig(request.env);
  const inFile = Object.keys(secretsIn(request));
  const onWorker = secretsOnWorker(await wrangler.capture(wranglerCommand.secretList(request.env)));
  const missing = missingSecrets(required, { onWorker, inFile, vars: Object.keys(vars) });
  if (missing.length === 0) {
    console.error(`secrets of ${request.env}: ${required.join(", ") || "none required"} set`);
    return [];
  }
  if (!request.allowOpen) throw new Error(secretsMessage(request.env, missing, false));
  console.error(secretsMessage(request.env, missing, true));
  return missing;
}

/**
 * wrangler's arguments for a command that bundles the Worker: the generated config that aliases its models,
 * after the edge models passed the checks the Worker will run on them, and the secrets file to upload with it.
 * `open`: required secrets an --allow-open deploy goes without.
 */
async function bundling(request: Uploading, open: readonly string[] = []): Promise<string[]> {
  const publicKey = await publicKeyOf(request);
  // Imported here, as the model module generator is: only commands that bundle need the model code.
  const { verifyEdgeModels } = await import("./deploy/verify-models.ts");
  const checked = await verifyEdgeModels(MODELS_DIR, publicKey);
  console.error(
    publicKey
      ? `edge models signed and intact: ${checked.join(", ")}`
      : `MODEL SIGNATURES NOT VERIFIED for ${request.env} (no MODEL_PUBLIC_KEY): ${checked.join(", ")} checked against their sha256 only`,
  );
  const [flag, generated] = await generateModels(MODELS_DIR, EDGE_BUILD_DIR);
  let config = generated!;
  if (open.length > 0) {
    // Beside the generated one (relative paths in it stay right); gitignored as .wrangler-models-*.toml.
    config = join(ROOT, ".wrangler-models-open.toml");
    writeFileSync(config, withoutRequiredSecrets(readFileSync(generated!, "utf8"), request.env, open));
  }
  const path = secretsPath(request);
  const secrets = path ? ["--secrets-file", path] : [];
  // wrangler runs in ROOT: the relative path reads better in dry runs and logs.
  return [flag!, relative(ROOT, config), ...secrets, ...request.wranglerArgs];
}

async function deploy(request: DeployRequest): Promise<void> {
  const { env } = request;
  const print = (args: string[]) => console.log(`wrangler ${shellLine(args)}`);
  if (request.mode === "deploy") {
    // A dry run only bundles (no credentials needed): the secrets are checked when it is for real.
    const open = request.dryRun ? [] : await checkSecrets(request);
    return wrangler.run(wranglerCommand.deploy(env, await bundling(request, open)));
  }

  if (request.mode === "rollback") {
    const args = wranglerCommand.rollback(env, request.versionId, request.message);
    if (request.dryRun) {
      print(wranglerCommand.status(env));
      print(args);
      return;
    }
    console.error(await wrangler.read(wranglerCommand.status(env)));
    return wrangler.run(args);
  }

  if (request.dryRun) {
    print(wranglerCommand.status(env));
    if (!request.versionId) {
      print(wranglerCommand.secretList(env));
      print(wranglerCommand.upload(env, request.message, await bundling(request)));
    }
    const live = request.versionId
      ? { versions: [...STABLE.versions, { version_id: request.versionId, percentage: 0 }] }
      : STABLE;
    print(
      wranglerCommand.split(env, gradualSplit(live, request.versionId ?? UPLOADED, request.percent), request.message),
    );
    print(wranglerCommand.triggers(env));
    return;
  }
  // Check the split before uploading anything: a refused split should not leave a stray version behind.
  const live = parseDeploymentStatus(await wrangler.read(wranglerCommand.status(env)));
  gradualSplit(live, request.versionId ?? UPLOADED, request.percent);
  let candidate = request.versionId;
  if (!candidate) {
    const open = await checkSecrets(request);
    const dir = mkdtempSync(join(tmpdir(), "edgecascade-deploy-"));
    try {
      const outputFile = join(dir, "wrangler-output.json");
      await wrangler.run(wranglerCommand.upload(env, request.message, await bundling(request, open)), {
        WRANGLER_OUTPUT_FILE_PATH: outputFile,
      });
      candidate = uploadedVersionId(readFileSync(outputFile, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await wrangler.run(wranglerCommand.split(env, gradualSplit(live, candidate, request.percent), request.message));
  // Versions carry code, bindings and secrets, not routes, Custom Domains or crons: apply those too.
  await wrangler.run(wranglerCommand.triggers(env));
  if (request.percent < 100) {
    console.error(
      `\n${candidate} serves ${request.percent}% of ${env}. Next: npm run deploy -- --env ${env} --version-id ${candidate} --percent <P>, or --rollback`,
    );
  }
}

// Run as the main module. import.meta.url is percent-encoded, so compare it with argv[1] as a URL too:
// a checkout path with a space must not turn the script into a silent no-op.
if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  runMain(
    defineCommand({
      name: "deploy",
      usage: DEPLOY_USAGE,
      description: DEPLOY_DESCRIPTION,
      flags: DEPLOY_FLAGS,
      parse: { passThrough: true },
      async run(values, { rest }) {
        await deploy(deployRequest(values, rest, deployableEnvs(readFileSync(join(ROOT, "wrangler.toml"), "utf8"))));
        return 0;
      },
    }),
  );
}
