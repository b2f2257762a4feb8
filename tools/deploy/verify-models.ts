import { readFileSync } from "node:fs";
import { verifyModelBytes } from "../../edge/inference/edge-variant.ts";
import { importModelPublicKey } from "../../protocol/model-signature.ts";
import { readRepository } from "../edge-bundle/edge-models.ts";

/**
 * Before a Worker deploy: every edge variant the bundle would carry must pass the checks the Worker itself
 * runs when it loads it (size, sha256 and, with the environment's public key, the signature). A refusal here
 * stops the deploy, so the Worker version serving now keeps serving instead of one whose edge models would
 * never load. Resolves with what was checked; rejects naming every file that fails.
 */
export async function verifyEdgeModels(modelsDir: string, publicKeyText: string | undefined): Promise<string[]> {
  const publicKey = publicKeyText ? await importModelPublicKey(publicKeyText) : undefined;
  const checked: string[] = [];
  const problems: string[] = [];
  for (const model of readRepository(modelsDir)) {
    if (!model.edge) continue;
    const { config, file } = model.edge;
    try {
      await verifyModelBytes(config, new Uint8Array(readFileSync(file)), config.version, publicKey);
      checked.push(`${config.name}/${config.version}`);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) throw new Error(`edge models refused, nothing deployed:\n  ${problems.join("\n  ")}`);
  return checked;
}
