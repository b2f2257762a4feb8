import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Where the Worker bundle goes (gitignored). */
export const EDGE_BUILD_DIR = join(ROOT, ".build/edge");
/** The repository's own models, what `npm start` serves and deploys bundle. */
export const MODELS_DIR = join(ROOT, "models");
/** Where the Worker's model module is generated for `models/` (wrangler.toml's alias points here). */
export const EDGE_MODELS_MODULE = join(ROOT, ".build/models/edge-models.js");
/** Set by the edge test suite's globalSetup once it has built the bundle for this run. */
export const PREBUILT_ENV = "EDGECASCADE_EDGE_PREBUILT";

/** A module of the bundle, as Miniflare takes it (type by extension, as wrangler's rules made them). */
export interface BundleModule {
  type: "ESModule" | "CompiledWasm" | "Data";
  path: string;
}

export interface EdgeBundle {
  dir: string;
  modules: BundleModule[];
}

const TYPES: Record<string, BundleModule["type"]> = { ".js": "ESModule", ".wasm": "CompiledWasm", ".onnx": "Data" };

/** The modules of a built bundle, entry first (Miniflare takes the first ESModule as the entry point). */
export function bundleModules(dir: string): BundleModule[] {
  const modules: BundleModule[] = [];
  for (const file of readdirSync(dir).sort()) {
    const ext = file.slice(file.lastIndexOf("."));
    const type = TYPES[ext];
    if (type) modules.push({ type, path: join(dir, file) });
  }
  const entry = modules.findIndex((m) => m.path.endsWith("/worker.js"));
  if (entry < 0) throw new Error(`${dir}: no worker.js; is this a wrangler --outdir build?`);
  modules.unshift(...modules.splice(entry, 1));
  return modules;
}

/**
 * Generate the Worker's model module from a model repository and the `--alias` that makes the bundle use it:
 * the repository's own `models/` goes where wrangler.toml's alias points; another directory (a test's) gets a
 * module of its own beside its bundle.
 */
export async function generateModels(modelsDir: string, outdir: string): Promise<string[]> {
  // Imported here, not at the top: this module is also the deploy script's, which must start (and print its
  // usage) with nothing but Node built-ins.
  const { EDGE_MODELS_SPECIFIER, writeEdgeModels } = await import("./edge-models.ts");
  const own = resolve(modelsDir) === MODELS_DIR;
  const module = own ? EDGE_MODELS_MODULE : `${outdir}-models/edge-models.js`;
  writeEdgeModels(modelsDir, module);
  return own ? [] : ["--alias", `${EDGE_MODELS_SPECIFIER}:${module}`];
}

/**
 * Bundle the Worker exactly as `wrangler deploy` would (`--dry-run --outdir`), optionally for a wrangler
 * environment, serving the models of `modelsDir` (default: the repository's). Builds into a fresh directory
 * and swaps it in, so a reader never sees half a bundle.
 */
export async function wranglerBuild(
  outdir: string,
  env?: string,
  modelsDir = MODELS_DIR,
): Promise<{ dir: string; log: string }> {
  const tmp = `${outdir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(outdir), { recursive: true });
  const alias = await generateModels(modelsDir, outdir);
  const args = ["deploy", "--dry-run", "--outdir", tmp, ...(env ? ["--env", env] : []), ...alias];
  const { stdout, stderr } = await run(join(ROOT, "node_modules/.bin/wrangler"), args, {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    maxBuffer: 16 * 1024 * 1024,
  });
  rmSync(outdir, { recursive: true, force: true });
  renameSync(tmp, outdir);
  return { dir: outdir, log: stdout + stderr };
}

const building = new Map<string, Promise<EdgeBundle>>();

/**
 * The Worker bundle of a model repository for this process: built once per repository (for `models/`, reused
 * when the test suite's globalSetup already built it in this run), then shared by every startEdgeWorker call.
 */
export function edgeBundle(modelsDir = MODELS_DIR): Promise<EdgeBundle> {
  const key = resolve(modelsDir);
  let bundle = building.get(key);
  if (!bundle) {
    const own = key === MODELS_DIR;
    const dir = own
      ? EDGE_BUILD_DIR
      : join(ROOT, ".build", `edge-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`);
    bundle = (async () => {
      if (!(own && process.env[PREBUILT_ENV] && existsSync(join(EDGE_BUILD_DIR, "worker.js")))) {
        await wranglerBuild(dir, undefined, modelsDir);
      }
      return { dir, modules: bundleModules(dir) };
    })();
    building.set(key, bundle);
    bundle.catch(() => building.delete(key));
  }
  return bundle;
}
