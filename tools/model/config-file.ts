import { readFileSync } from "node:fs";
import { readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * A repository's `config.json` files as the tools read and write them. Only a path that does not exist reads as
 * absent (no model there): any other failure, permissions first, throws naming the path, so a model never
 * silently leaves a bundle or an import. Writes are whole or not at all.
 */

/** Whether `err` says the path does not exist (or a part of it is not a directory). */
export function isAbsent(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

const unreadable = (path: string, err: unknown) => new Error(`cannot read ${path}: ${(err as Error).message}`);

/** The file's text, or undefined when it does not exist. */
export async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw unreadable(path, err);
  }
}

/** `readIfPresent`, synchronously. */
export function readIfPresentSync(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw unreadable(path, err);
  }
}

/** The names of the directories in `dir`, none when it does not exist. */
export async function subdirectories(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if (isAbsent(err)) return [];
    throw unreadable(dir, err);
  }
}

/**
 * Write `raw` as `path` (JSON, 2 spaces, a final newline) whole: to a temporary file beside it, flushed to disk,
 * then renamed over it, so a reader (a pool's reload, a deploy's bundle) sees the old file or the new one,
 * never half of one, and a failed write leaves the old file as it was.
 */
export async function writeConfig(path: string, raw: unknown): Promise<void> {
  const tmp = join(dirname(path), `.config.json.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    await writeFile(tmp, `${JSON.stringify(raw, null, 2)}\n`, { flush: true });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
