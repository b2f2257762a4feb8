import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseModelConfig } from "../../protocol/model-config.ts";
import { importModelPublicKey, signatureProblem } from "../../protocol/model-signature.ts";
import { runSubcommands } from "../../tools/cli/command.ts";
import { COMMANDS } from "../../tools/model/commands.ts";
import { blobs, csv, nearestCentroidMlp } from "../support/onnx-models.ts";

const dir = mkdtempSync(join(tmpdir(), "edgecascade-signing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function model(...argv: string[]) {
  const lines: string[] = [];
  const notes: string[] = [];
  const code = await runSubcommands(argv, COMMANDS, { log: (l) => lines.push(l), note: (l) => notes.push(l) }, "model");
  return { code, lines, notes };
}

/** Every version's signature of `name` in `models`, checked with `publicKey` (undefined: each verifies). */
async function problems(models: string, name: string, publicKey: string) {
  const config = parseModelConfig(JSON.parse(readFileSync(join(models, name, "config.json"), "utf8")), name);
  const key = await importModelPublicKey(publicKey);
  return Promise.all(
    Object.entries(config.versions).map(([version, e]) =>
      signatureProblem(key, { model: name, version, sha256: e.sha256, bytes: e.bytes }, e.signature),
    ),
  );
}

const keys = join(dir, "keys");
const CENTROIDS = [
  [0, 0, 0],
  [3, 0, 1],
];
const data = blobs({ width: 3, centroids: CENTROIDS, perClass: 150, sigma: 0.8, seed: 3 });
writeFileSync(join(dir, "full.onnx"), nearestCentroidMlp(CENTROIDS, 2));
writeFileSync(join(dir, "data.csv"), csv(data.rows, data.labels));

describe("keygen, import --signing-key, sign", () => {
  let publicKey = "";

  it("keygen writes a private key only its owner can read and prints the public key", async () => {
    const made = await model("keygen", "--out", keys);
    expect(made.code).toBe(0);
    publicKey = made.lines.find((l) => l.startsWith("MODEL_PUBLIC_KEY="))!.slice("MODEL_PUBLIC_KEY=".length);
    expect(publicKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(readFileSync(join(keys, "model-signing.pub"), "utf8").trim()).toBe(publicKey);
    expect(statSync(join(keys, "model-signing.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(keys, "model-signing.key"), "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const again = await model("keygen", "--out", keys);
    expect(again.code).toBe(1);
    expect(again.notes[0]).toMatch(/already holds a key pair; pass --force/);
  });

  it("import signs every file it writes, next to its sha256", async () => {
    const models = join(dir, "models");
    const argv = [
      "--name",
      "blobs",
      "--full",
      join(dir, "full.onnx"),
      "--quantize",
      "--data",
      join(dir, "data.csv"),
      "--agreement",
      "0.95",
    ];
    const imported = await model(
      "import",
      ...argv,
      "--models",
      models,
      "--signing-key",
      join(keys, "model-signing.key"),
    );
    expect(imported.code).toBe(0);
    expect(imported.notes.at(-1)).toMatch(/^signed every file with key [0-9a-f]{16}$/);
    for (const name of ["blobs", "blobs-edge"]) {
      const entry = JSON.parse(readFileSync(join(models, name, "config.json"), "utf8")).versions["1"];
      expect(Object.keys(entry).slice(0, 4)).toEqual(["file", "sha256", "bytes", "signature"]);
      expect(await problems(models, name, publicKey)).toEqual([undefined]);
    }
    // Without a key nothing is signed, and import says so.
    const unsigned = await model("import", ...argv, "--models", join(dir, "unsigned"));
    expect(unsigned.notes.at(-1)).toBe("not signed: no --signing-key or MODEL_SIGNING_KEY");
    expect(await problems(join(dir, "unsigned"), "blobs", publicKey)).toEqual([
      expect.stringMatching(/blobs\/1 is not signed/),
    ]);
  });

  it("sign signs what is in the repository, and refuses a file that does not match its entry", async () => {
    const models = join(dir, "unsigned");
    const signed = await model(
      "sign",
      "--name",
      "blobs",
      "--models",
      models,
      "--signing-key",
      join(keys, "model-signing.key"),
    );
    expect(signed).toMatchObject({ code: 0, lines: [expect.stringMatching(/^blobs\/1: signed by key [0-9a-f]{16}$/)] });
    expect(await problems(models, "blobs", publicKey)).toEqual([undefined]);
    writeFileSync(join(models, "blobs-edge", "1", "model.onnx"), "not the file");
    const refused = await model(
      "sign",
      "--name",
      "blobs-edge",
      "--models",
      models,
      "--signing-key",
      join(keys, "model-signing.key"),
    );
    expect(refused.code).toBe(1);
    expect(refused.notes[0]).toMatch(/not signing a file that does not match its entry/);
    expect((await model("sign", "--name", "blobs", "--models", models)).code).toBe(2);
  });
});
