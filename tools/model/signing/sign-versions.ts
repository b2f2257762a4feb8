import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseModelConfig } from "../../../protocol/model-config.ts";
import { checkModelFile } from "../../../protocol/model-file-check.ts";
import { RefusedError } from "../../cli/errors.ts";
import { writeConfig } from "../config-file.ts";
import type { ModelSigner } from "./keys.ts";

/**
 * Sign `versions` of model `name` in `modelsDir` (default: every version): each file is checked against its
 * sha256 and size in config.json, then its signature is written next to that sha256. Returns the versions
 * signed. Refused, with nothing written, when a file does not match its entry.
 */
export async function signVersions(
  modelsDir: string,
  name: string,
  signer: ModelSigner,
  versions?: readonly string[],
): Promise<string[]> {
  const configPath = join(modelsDir, name, "config.json");
  const text = await readFile(configPath, "utf8").catch((err: Error) => {
    throw new RefusedError(`cannot read ${configPath}: ${err.message}`);
  });
  const raw = JSON.parse(text) as { versions: Record<string, Record<string, unknown>> };
  const config = parseModelConfig(raw, configPath);
  const chosen = versions ?? Object.keys(config.versions);
  for (const version of chosen) {
    const entry = config.versions[version];
    if (!entry) throw new RefusedError(`${name} has no version ${version} in config.json`);
    const bytes = await readFile(join(modelsDir, name, version, entry.file)).catch((err: Error) => {
      throw new RefusedError(`cannot read ${name}/${version}/${entry.file}: ${err.message}`);
    });
    const { sha256, checksumProblem } = await checkModelFile(bytes, name, version, entry);
    if (checksumProblem) {
      throw new RefusedError(`${checksumProblem}: not signing a file that does not match its entry`);
    }
    const signature = signer.sign({ model: config.name, version, sha256, bytes: bytes.length });
    // Rebuilt so that the signature sits next to the sha256 it covers; every other field is kept.
    const { file, sha256: listed, bytes: size, signature: _old, ...rest } = raw.versions[version]!;
    raw.versions[version] = { file, sha256: listed, bytes: size, signature, ...rest };
  }
  await writeConfig(configPath, raw);
  return [...chosen];
}
