import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { type ModelConfig, parseModelConfig } from "../protocol/model-config.ts";
import { versionBytes } from "./memory-budget.ts";

/**
 * Discovery, as Triton's ModelRepositoryManager does it: which models a Triton-layout directory holds
 * (`<name>/config.json`, `<name>/<version>/<file>`) and what their configs say. Loading and serving
 * versions is the lifecycle's (repository.ts).
 */

/** Directory names a model may have: no path separators, never `.` or `..`. */
const MODEL_NAME = /^[A-Za-z0-9_][\w.-]*$/;

/** Names of the directories of `modelsDir` holding a config.json, sorted; throws when it cannot be read. */
export async function discoverModels(modelsDir: string): Promise<string[]> {
  const dirents = await readdir(modelsDir, { withFileTypes: true }).catch((err: Error) => {
    throw new Error(`model repository ${modelsDir}: ${err.message}`);
  });
  const names: string[] = [];
  for (const d of dirents) {
    if (d.isDirectory() && (await isModelDir(modelsDir, d.name))) names.push(d.name);
  }
  return names.sort();
}

/** Whether `name` is a valid model directory name holding a config.json (a model added since start). */
export async function isModelDir(modelsDir: string, name: string): Promise<boolean> {
  if (!MODEL_NAME.test(name)) return false;
  return stat(join(modelsDir, name, "config.json")).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** `name`'s config.json as it is on disk now, validated; the error names the file and what is wrong. */
export async function readModelConfig(modelsDir: string, name: string): Promise<ModelConfig> {
  const source = `${name}/config.json`;
  const text = await readFile(join(modelsDir, name, "config.json"), "utf8").catch((err: Error) => {
    throw new Error(`cannot read ${source}: ${err.message}`);
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: invalid JSON: ${(err as Error).message}`);
  }
  const config = parseModelConfig(raw, source);
  if (config.name !== name) throw new Error(`${source} names the model "${config.name}", not "${name}"`);
  return config;
}

/**
 * A repository at start: its models (throws when it holds none, or when a pinned model is not in it), the
 * configs that could be read (one that cannot is left to the model's load, which fails with the reason), and
 * what every model's configured version is counted as (memory-budget.ts), which `auto` weighs against the budget.
 */
export async function discoverRepository(
  modelsDir: string,
  pinned: ReadonlySet<string>,
): Promise<{ names: string[]; configs: ModelConfig[]; estimatedBytes: number }> {
  const names = await discoverModels(modelsDir);
  if (names.length === 0) throw new Error(`model repository ${modelsDir}: no <name>/config.json found`);
  const unknown = [...pinned].filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new Error(`--pinned-models names ${unknown.map((n) => `"${n}"`).join(", ")}, not in ${modelsDir}`);
  }
  const read = await Promise.all(names.map((name) => readModelConfig(modelsDir, name).catch(() => undefined)));
  const configs = read.filter((c) => c !== undefined);
  const estimatedBytes = configs.reduce((sum, c) => sum + versionBytes(c.versions[c.version]!.bytes), 0);
  return { names, configs, estimatedBytes };
}
