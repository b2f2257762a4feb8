/**
 * `npm run deploy -- --env <region> [wrangler options]`: `wrangler deploy --env <region>` for one of the
 * regions in wrangler.toml, with the models of `models/` (the Worker's model module is generated first). Extra arguments (`--dry-run`, `--outdir dir`, ...) pass through to wrangler.
 * The top level of wrangler.toml is the local stack and is never deployed.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { EDGE_BUILD_DIR, generateModels, MODELS_DIR, ROOT } from "./stack/build-edge.ts";

const USAGE = "usage: npm run deploy -- --env <region> [--dry-run] [other wrangler deploy options]";

/** Regions deployable from wrangler.toml: its `[env.<name>]` tables. */
export function deployableEnvs(toml: string): string[] {
  return [...toml.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]!);
}

/** Split our arguments: the environment (required, `--env x` or `--env=x`) and what goes to wrangler. */
export function parseDeployArgs(argv: readonly string[], envs: readonly string[]): { env: string; rest: string[] } {
  const rest: string[] = [];
  let env: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--env" || arg === "-e") env = argv[++i];
    else if (arg.startsWith("--env=")) env = arg.slice("--env=".length);
    else rest.push(arg);
  }
  if (!env) throw new Error(`--env is required (one of ${envs.join(", ")})\n${USAGE}`);
  if (!envs.includes(env)) throw new Error(`unknown environment "${env}"; wrangler.toml has ${envs.join(", ")}`);
  return { env, rest };
}

// Run as the main module. import.meta.url is percent-encoded, so compare it with argv[1] as a URL too:
// a checkout path with a space must not turn the script into a silent no-op.
if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const deploy = async () => {
    const envs = deployableEnvs(readFileSync(join(ROOT, "wrangler.toml"), "utf8"));
    const { env, rest } = parseDeployArgs(process.argv.slice(2), envs);
    // The Worker serves exactly the models in models/: generate its model module before wrangler bundles.
    const config = await generateModels(MODELS_DIR, EDGE_BUILD_DIR);
    const child = spawn(join(ROOT, "node_modules/.bin/wrangler"), ["deploy", "--env", env, ...config, ...rest], {
      cwd: ROOT,
      stdio: "inherit",
    });
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  };
  deploy().catch((err: Error) => {
    console.error(err.message);
    process.exit(2);
  });
}
