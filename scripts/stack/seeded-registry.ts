import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Registry } from "../../registry/s3-registry.ts";
import { localConfigs, publishVersion } from "../../tools/model/publish/publish.ts";
import { generateModelKeys, signerOf } from "../../tools/model/signing/keys.ts";
import { signVersions } from "../../tools/model/signing/sign-versions.ts";
import { type LocalRegistry, startLocalRegistry } from "./local-registry.ts";

export interface SeededRegistry {
  registry: LocalRegistry;
  /** The signed copy of the repository that was published (the Worker's bundle is built from it too). */
  modelsDir: string;
  /** The key every published file is signed with: the pools' and the Worker's MODEL_PUBLIC_KEY. */
  publicKey: string;
  /** Its private key, for `npm run model -- sign --signing-key` of the versions published next. */
  signingKeyFile: string;
  close(): Promise<void>;
}

/**
 * `npm start -- --registry`: a local model registry (s3rver) holding a repository's models, as production's holds
 * them: a copy of the repository signed with a key made for this run (the sample models are unsigned, and only
 * signed files load from a registry), every model published at its config's version.
 */
export async function seededRegistry(modelsDir: string, port = 0): Promise<SeededRegistry> {
  const work = mkdtempSync(join(tmpdir(), "edgecascade-local-registry-"));
  const copy = join(work, "models");
  cpSync(modelsDir, copy, { recursive: true });
  const keys = await generateModelKeys();
  const signingKeyFile = join(work, "model-signing.key");
  writeFileSync(signingKeyFile, keys.privatePem, { mode: 0o600 });
  const { createPrivateKey } = await import("node:crypto");
  const signer = await signerOf(createPrivateKey(keys.privatePem));
  for (const name of readdirSync(copy)) {
    if (statSync(join(copy, name)).isDirectory()) await signVersions(copy, name, signer);
  }
  const registry = await startLocalRegistry({ port });
  const client = new S3Registry({ url: registry.url, endpoint: registry.endpoint, env: registry.env });
  try {
    const configs = (await localConfigs(copy)).sort((a, b) => Number(!!a.standsFor) - Number(!!b.standsFor));
    for (const config of configs) await publishVersion(client, copy, config.name, config.version);
  } finally {
    client.close();
  }
  return {
    registry,
    modelsDir: copy,
    publicKey: keys.publicKey,
    signingKeyFile,
    async close() {
      await registry.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
