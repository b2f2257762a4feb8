import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../../protocol/digest.ts";

const MODELS = fileURLToPath(new URL("../../models/", import.meta.url));

/**
 * A scratch copy of the model repository in which `model` also has version `version`: a byte-identical copy of
 * its serving version with its own checksum entry, not the default (config.json keeps serving the old one), so
 * that a run can hot-swap to it with `POST /v2/repository/models/<model>/load` and see every answer move to it.
 */
export async function repositoryWithNewVersion(
  model: string,
  version: string,
): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-validate-models-"));
  cpSync(MODELS, dir, { recursive: true });
  const configPath = join(dir, model, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  const serving = config.versions[config.version];
  const bytes = readFileSync(join(dir, model, config.version, serving.file));
  cpSync(join(dir, model, config.version), join(dir, model, version), { recursive: true });
  config.versions[version] = { ...serving, sha256: await sha256Hex(bytes), bytes: bytes.length };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
