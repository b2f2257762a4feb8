import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface ProductionCopy {
  /** The copy's root: the repository's files and a production-only node_modules. */
  dir: string;
  /** What `npm ci --omit=dev` printed. */
  installLog: string;
  remove(): void;
}

/**
 * The repository as a deployment gets it: every file git would commit (tracked, or new and not ignored) copied
 * to a temporary directory, then `npm ci --omit=dev` there, so that anything the pool imports from a
 * devDependency fails to load. The install takes the lockfile's tarballs from npm's cache when they are there
 * (`--prefer-offline`: CI's own `npm ci` has just put them there; the registry is asked only for what is missing),
 * rather than revalidating each one with the registry: what is installed is the same, a few seconds sooner.
 */
export async function productionCopy(installArgs: string[] = ["ci", "--omit=dev"]): Promise<ProductionCopy> {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-production-"));
  try {
    await copyCommittable(dir);
    const install = await run("npm", [...installArgs, "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: dir,
      env: { ...process.env, NODE_ENV: "production" },
      maxBuffer: 64 * 1024 * 1024,
    });
    return {
      dir,
      installLog: install.stdout + install.stderr,
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Every file git would commit (tracked, or new and not ignored), copied into `dir`. */
export async function copyCommittable(dir: string): Promise<void> {
  const { stdout } = await run("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    mkdirSync(join(dir, dirname(file)), { recursive: true });
    // A tracked file deleted in the work tree is not part of what would be committed.
    try {
      cpSync(join(ROOT, file), join(dir, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

/**
 * A working copy of the repository for a test that changes it (the docs run edits wrangler.toml and signs the
 * models): the committable files, and this checkout's node_modules linked in.
 */
export async function workingCopy(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-copy-"));
  try {
    await copyCommittable(dir);
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
