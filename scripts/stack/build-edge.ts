import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Where the Worker bundle goes (gitignored). */
export const EDGE_BUILD_DIR = join(ROOT, ".build/edge");
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
 * Bundle the Worker exactly as `wrangler deploy` would (`--dry-run --outdir`), optionally for a wrangler
 * environment. Builds into a fresh directory and swaps it in, so a reader never sees half a bundle.
 */
export async function wranglerBuild(outdir: string, env?: string): Promise<{ dir: string; log: string }> {
  const tmp = `${outdir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(outdir), { recursive: true });
  const args = ["deploy", "--dry-run", "--outdir", tmp, ...(env ? ["--env", env] : [])];
  const { stdout, stderr } = await run(join(ROOT, "node_modules/.bin/wrangler"), args, {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    maxBuffer: 16 * 1024 * 1024,
  });
  rmSync(outdir, { recursive: true, force: true });
  renameSync(tmp, outdir);
  return { dir: outdir, log: stdout + stderr };
}

let building: Promise<EdgeBundle> | undefined;

/**
 * The Worker bundle for this process: built once (or reused when the test suite's globalSetup already
 * built it in this run), then shared by every startEdgeWorker call.
 */
export function edgeBundle(): Promise<EdgeBundle> {
  building ??= (async () => {
    if (!(process.env[PREBUILT_ENV] && existsSync(join(EDGE_BUILD_DIR, "worker.js")))) {
      await wranglerBuild(EDGE_BUILD_DIR);
    }
    return { dir: EDGE_BUILD_DIR, modules: bundleModules(EDGE_BUILD_DIR) };
  })();
  building.catch(() => {
    building = undefined;
  });
  return building;
}
