import { generateKeyPairSync } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type ModelSigner, signerOf } from "../../tools/model/signing/keys.ts";
import { signVersions } from "../../tools/model/signing/sign-versions.ts";

/** A key pair made in the test (the committed sample models are unsigned: docs/model-tool.md says why). */
export async function testSigner(): Promise<ModelSigner> {
  return signerOf(generateKeyPairSync("ed25519").privateKey);
}

/** Sign every version of every model of a scratch repository. */
export async function signRepository(dir: string, signer: ModelSigner): Promise<void> {
  for (const name of readdirSync(dir)) {
    if (statSync(join(dir, name)).isDirectory()) await signVersions(dir, name, signer);
  }
}
