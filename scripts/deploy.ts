/**
 * `npm run deploy -- --env <region> [--percent P [--version-id ID]] [--rollback] [--message M] [--dry-run]`:
 * deploys the edge Worker to one of wrangler.toml's environments, at once or gradually with Worker versions.
 * The top level of wrangler.toml is the local stack and is never deployed. The Worker serves exactly the models
 * of `models/`: its model module is generated before any command that bundles (deploy, versions upload). What
 * runs is planned by the pure functions of scripts/deploy/plan.ts; this file runs wrangler and prints each
 * command first.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type DeployRequest,
  deployableEnvs,
  gradualSplit,
  type LiveDeployment,
  parseDeployArgs,
  parseDeploymentStatus,
  shellLine,
  uploadedVersionId,
  wranglerCommand,
} from "./deploy/plan.ts";
import { EDGE_BUILD_DIR, generateModels, MODELS_DIR, ROOT } from "./stack/build-edge.ts";

const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

interface Wrangler {
  /** Run with the terminal attached; rejects on a non-zero exit. */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<void>;
  /** Run and return stdout. */
  read(args: string[]): Promise<string>;
}

const wrangler: Wrangler = {
  run: (args, env) => exec(args, "inherit", env).then(() => undefined),
  read: (args) => exec(args, "pipe"),
};

function exec(args: string[], stdout: "inherit" | "pipe", env?: NodeJS.ProcessEnv): Promise<string> {
  console.error(`$ wrangler ${shellLine(args)}`);
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER, args, {
      cwd: ROOT,
      stdio: ["inherit", stdout, "inherit"],
      env: { ...process.env, ...env },
    });
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0 ? resolve(out) : reject(new Error(`wrangler ${args[0]} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

/** Placeholders a dry run prints where wrangler's answers would go. */
const UPLOADED = "<uploaded-version-id>";
const STABLE: LiveDeployment = { versions: [{ version_id: "<serving-version-id>", percentage: 100 }] };

/**
 * The environment's MODEL_PUBLIC_KEY: the deploying shell's, else wrangler.toml's `[env.<env>.vars]`. (A key
 * kept as a Worker secret is invisible here: export it for the deploy too, or the check is signatures-free.)
 */
async function publicKeyOf(env: string): Promise<string | undefined> {
  if (process.env.MODEL_PUBLIC_KEY) return process.env.MODEL_PUBLIC_KEY;
  const { unstable_readConfig } = await import("wrangler");
  const value = unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env }).vars.MODEL_PUBLIC_KEY;
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * wrangler's arguments for a command that bundles the Worker: the generated config that aliases its models,
 * after the edge models passed the checks the Worker will run on them.
 */
async function bundling(request: Extract<DeployRequest, { wranglerArgs: string[] }>): Promise<string[]> {
  const publicKey = await publicKeyOf(request.env);
  // Imported here, as the model module generator is: only commands that bundle need the model code.
  const { verifyEdgeModels } = await import("./deploy/verify-models.ts");
  const checked = await verifyEdgeModels(MODELS_DIR, publicKey);
  console.error(
    publicKey
      ? `edge models signed and intact: ${checked.join(", ")}`
      : `MODEL SIGNATURES NOT VERIFIED for ${request.env} (no MODEL_PUBLIC_KEY): ${checked.join(", ")} checked against their sha256 only`,
  );
  const [flag, config] = await generateModels(MODELS_DIR, EDGE_BUILD_DIR);
  // wrangler runs in ROOT: the relative path reads better in dry runs and logs.
  return [flag!, relative(ROOT, config!), ...request.wranglerArgs];
}

async function deploy(request: DeployRequest): Promise<void> {
  const { env } = request;
  if (request.mode === "deploy") return wrangler.run(wranglerCommand.deploy(env, await bundling(request)));
  const print = (args: string[]) => console.log(`wrangler ${shellLine(args)}`);

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
    if (!request.versionId) print(wranglerCommand.upload(env, request.message, await bundling(request)));
    const live = request.versionId
      ? { versions: [...STABLE.versions, { version_id: request.versionId, percentage: 0 }] }
      : STABLE;
    print(
      wranglerCommand.split(env, gradualSplit(live, request.versionId ?? UPLOADED, request.percent), request.message),
    );
    return;
  }
  // Check the split before uploading anything: a refused split should not leave a stray version behind.
  const live = parseDeploymentStatus(await wrangler.read(wranglerCommand.status(env)));
  gradualSplit(live, request.versionId ?? UPLOADED, request.percent);
  let candidate = request.versionId;
  if (!candidate) {
    const dir = mkdtempSync(join(tmpdir(), "edgecascade-deploy-"));
    try {
      const outputFile = join(dir, "wrangler-output.json");
      await wrangler.run(wranglerCommand.upload(env, request.message, await bundling(request)), {
        WRANGLER_OUTPUT_FILE_PATH: outputFile,
      });
      candidate = uploadedVersionId(readFileSync(outputFile, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await wrangler.run(wranglerCommand.split(env, gradualSplit(live, candidate, request.percent), request.message));
  if (request.percent < 100) {
    console.error(
      `\n${candidate} serves ${request.percent}% of ${env}. Next: npm run deploy -- --env ${env} --version-id ${candidate} --percent <P>, or --rollback`,
    );
  }
}

// Run as the main module. import.meta.url is percent-encoded, so compare it with argv[1] as a URL too:
// a checkout path with a space must not turn the script into a silent no-op.
if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  let request: DeployRequest;
  try {
    request = parseDeployArgs(process.argv.slice(2), deployableEnvs(readFileSync(join(ROOT, "wrangler.toml"), "utf8")));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  deploy(request).then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`deploy: ${err.message}`);
      process.exit(1);
    },
  );
}
