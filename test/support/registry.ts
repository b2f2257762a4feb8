import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../protocol/digest.ts";
import { type LocalRegistry, startLocalRegistry } from "../../scripts/stack/local-registry.ts";
import { runSubcommands } from "../../tools/cli/command.ts";
import { COMMANDS } from "../../tools/model/commands.ts";
import type { ModelSigner } from "../../tools/model/signing/keys.ts";
import { ROLLOUT_COMMANDS } from "../../tools/rollout/commands.ts";
import { signRepository, testSigner } from "./model-keys.ts";
import { addVersion, copyModels } from "./regional-server.ts";

/**
 * A model registry for a test: the local S3-compatible server (s3rver), a scratch copy of models/ with a
 * version 2 of digits (gates passed) and of its edge variant (calibrated against it), every file signed by a
 * key made here, and version 1 of every model published. The tools run in this process, as `npm run` runs them:
 * with the registry's variables set in the environment for as long as the registry lives.
 */
export interface TestRegistry {
  registry: LocalRegistry;
  models: { dir: string; remove(): void };
  signer: ModelSigner;
  /** `npm run model -- ARGS` against the registry; its exit code and what it printed. */
  model(...args: string[]): Promise<{ code: number; lines: string[] }>;
  /** `npm run rollout -- ARGS` against the registry. */
  rollout(...args: string[]): Promise<{ code: number; lines: string[] }>;
  close(): Promise<void>;
}

async function run(
  commands: typeof COMMANDS,
  tool: string,
  argv: string[],
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const out = { log: (l: string) => lines.push(l), note: (l: string) => lines.push(l) };
  return { code: await runSubcommands(argv, commands, out, tool), lines };
}

/** Add `version` of an edge variant calibrated against `against` of its full model (a copy of version 1's file). */
export async function addEdgeVersion(dir: string, edge: string, version: string, against: string): Promise<void> {
  await addVersion(dir, edge, version);
  const path = join(dir, edge, "config.json");
  const config = JSON.parse(readFileSync(path, "utf8"));
  config.versions[version].cascade.against.version = against;
  writeFileSync(path, JSON.stringify(config, null, 2));
}

export async function testRegistry(): Promise<TestRegistry> {
  const registry = await startLocalRegistry();
  const models = copyModels();
  await addVersion(models.dir, "digits", "2", { gates: "passed" });
  await addEdgeVersion(models.dir, "digits-edge", "2", "2");
  const signer = await testSigner();
  await signRepository(models.dir, signer);
  const saved = Object.fromEntries(Object.keys(registry.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, registry.env);
  const withRegistry = (argv: string[]) => [...argv, "--registry", registry.url];
  const model = (...args: string[]) => run(COMMANDS, "model", withRegistry([...args, "--models", models.dir]));
  const rollout = (...args: string[]) => run(ROLLOUT_COMMANDS, "rollout", withRegistry(args));
  const seeded = await model("publish", "--all", "--public-key", signer.publicKey);
  if (seeded.code !== 0) throw new Error(`publish --all: ${seeded.lines.join("\n")}`);
  return {
    registry,
    models,
    signer,
    model,
    rollout,
    async close() {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await registry.close();
      models.remove();
    },
  };
}

/** Replace an object of the registry's bucket behind the tools' back, as someone with write access could. */
export async function tamper(registry: LocalRegistry, key: string, bytes: Uint8Array): Promise<string> {
  const { S3Registry } = await import("../../registry/s3-registry.ts");
  const client = new S3Registry({ url: `s3://${registry.bucket}`, endpoint: registry.endpoint });
  try {
    await client.put(key.split("/"), bytes);
  } finally {
    client.close();
  }
  return sha256Hex(bytes);
}
