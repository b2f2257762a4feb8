import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { HELDOUT_FILE } from "../../../protocol/heldout.ts";
import { type ModelConfig, parseModelConfig } from "../../../protocol/model-config.ts";
import { checkModelFile, modelFileProblem } from "../../../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../../../protocol/model-signature.ts";
import { CONFIG_FILE } from "../../../protocol/registry/layout.ts";
import { firstServedState } from "../../../protocol/registry/served-state.ts";
import type { S3Registry } from "../../../registry/s3-registry.ts";
import { RefusedError } from "../../cli/errors.ts";
import { edgeVersionsWith, publishedConfig } from "./plan.ts";

async function localConfig(modelsDir: string, name: string): Promise<ModelConfig> {
  const path = join(modelsDir, name, CONFIG_FILE);
  const text = await readFile(path, "utf8").catch((err: Error) => {
    throw new RefusedError(`cannot read ${path}: ${err.message}`);
  });
  return parseModelConfig(JSON.parse(text), path);
}

/** The repository's configs, by name. */
export async function localConfigs(modelsDir: string): Promise<ModelConfig[]> {
  const names = (await readdir(modelsDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  const configs = await Promise.all(names.map((n) => localConfig(modelsDir, n).catch(() => undefined)));
  return configs.filter((c): c is ModelConfig => c !== undefined).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Publish `version` of `name` from `modelsDir` to the registry: the file (checked against its entry: sha256, and
 * with `publicKey` its signature; unsigned files are refused), its held-out fixture, then the config entry (the
 * commit point: readers find versions through config.json), then for a model new to the registry its first
 * served state. Returns what it did, one line each.
 */
export async function publishVersion(
  registry: S3Registry,
  modelsDir: string,
  name: string,
  version: string,
  publicKey?: ModelPublicKey,
): Promise<string[]> {
  const local = await localConfig(modelsDir, name);
  const existing = await registry.getJson([name, CONFIG_FILE]);
  const registryConfig = existing
    ? parseModelConfig(existing.value, `${registry.where}: ${name}/${CONFIG_FILE}`)
    : undefined;
  const plan = publishedConfig(registryConfig, local, version);
  if (!plan.ok) throw new RefusedError(plan.reason);
  const entry = local.versions[version]!;
  const bytes = await readFile(join(modelsDir, name, version, entry.file)).catch((err: Error) => {
    throw new RefusedError(`cannot read ${name}/${version}/${entry.file}: ${err.message}`);
  });
  const problem = modelFileProblem(await checkModelFile(bytes, name, version, entry, publicKey));
  if (problem) throw new RefusedError(`${problem}; not published`);
  const done: string[] = [];
  await registry.put([name, version, entry.file], bytes);
  done.push(
    `${name}/${version}/${entry.file} (${bytes.length} bytes, sha256 ${entry.sha256.slice(0, 12)}…, key ${entry.signature!.key})`,
  );
  if (!local.standsFor) {
    const heldout = await readFile(join(modelsDir, name, version, HELDOUT_FILE)).catch(() => undefined);
    if (!heldout)
      throw new RefusedError(
        `${name}/${version}/${HELDOUT_FILE} is missing: pools check a version on it before it serves`,
      );
    await registry.put([name, version, HELDOUT_FILE], heldout, { contentType: "application/json" });
    done.push(`${name}/${version}/${HELDOUT_FILE}`);
  }
  await registry.put([name, CONFIG_FILE], `${JSON.stringify(plan.config, null, 2)}\n`, {
    contentType: "application/json",
    ...(existing ? { ifMatch: existing.etag } : { ifNoneMatch: "*" }),
  });
  done.push(`${name}/${CONFIG_FILE}: version ${version} listed`);
  if (!local.standsFor && !(await registry.served(name))) {
    await registry.writeServed(firstServedState(name, version, new Date()), undefined);
    done.push(`${name}/served.json: version ${version} served (the model's first publication)`);
  }
  return done;
}

/**
 * What `publish --name NAME [--version V]` publishes: that version, and when NAME is a full model, the versions
 * of its edge variants calibrated against it (so that the edge can stand in for it as soon as it serves).
 */
export async function publishPlan(
  modelsDir: string,
  name: string,
  version: string | undefined,
): Promise<{ name: string; version: string }[]> {
  const configs = await localConfigs(modelsDir);
  const config = configs.find((c) => c.name === name);
  if (!config) throw new RefusedError(`${modelsDir} has no model "${name}" (no ${name}/${CONFIG_FILE})`);
  const chosen = version ?? config.version;
  const plan = [{ name, version: chosen }];
  if (!config.standsFor) {
    for (const edge of configs.filter((c) => c.standsFor === name)) {
      for (const v of edgeVersionsWith(edge, name, chosen)) plan.push({ name: edge.name, version: v });
    }
  }
  return plan;
}
