import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signVersions } from "../../tools/model/signing/sign-versions.ts";
import { signRepository, testSigner } from "../support/model-keys.ts";
import {
  addVersion,
  classifyRows,
  copyModels,
  get,
  metric,
  post,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";

const TOKEN = "admin-token-for-tests";
const auth = { authorization: `Bearer ${TOKEN}` };
const signer = await testSigner();
const other = await testSigner();

/** Change a scratch repository's digits/config.json in place. */
function editDigitsConfig(dir: string, edit: (config: { versions: Record<string, Record<string, unknown>> }) => void) {
  const path = join(dir, "digits", "config.json");
  const config = JSON.parse(readFileSync(path, "utf8"));
  edit(config);
  writeFileSync(path, JSON.stringify(config));
}

/** A copy of the sample repository with every file signed by `signer`. */
async function signedModels() {
  const models = copyModels();
  await signRepository(models.dir, signer);
  return models;
}

describe("a pool with a public key", () => {
  let models: ReturnType<typeof copyModels>;
  let server: TestServer;
  beforeAll(async () => {
    models = await signedModels();
    server = await startTestServer(
      testOptions(["--models", models.dir], { ADMIN_TOKEN: TOKEN, MODEL_PUBLIC_KEY: signer.publicKey }),
    );
  });
  afterAll(async () => {
    await server.shutdown();
    models.remove();
  });

  const load = (version: string) =>
    post(`${server.url}/v2/repository/models/digits/load`, { parameters: { version } }, auth);
  const served = async () => (await post(`${server.url}/v1/classify`, classifyRows(0))).body.version;

  it("serves signed models and says which key it requires", async () => {
    expect((await get(`${server.url}/v2`)).body.modelSignatures).toEqual({ required: true, key: signer.keyId });
    expect(metric((await get(`${server.url}/metrics`)).body, "edgecascade_model_signatures_required")).toBe(1);
    expect(server.logs.find((l) => l.msg.startsWith("model signatures: required"))).toMatchObject({
      modelSigningKey: signer.keyId,
    });
    expect(await served()).toBe("1");
  });

  it("loads a new version signed by its key", async () => {
    await addVersion(models.dir, "digits", "2");
    await signVersions(models.dir, "digits", signer, ["2"]);
    expect(await load("2")).toMatchObject({ status: 200, body: { version: "2", previous: "1" } });
    expect(await served()).toBe("2");
    expect(await load("1")).toMatchObject({ status: 200, body: { version: "1" } });
  });

  it.each([
    [
      // addVersion copies version 1's entry, signature included: removed here.
      "unsigned",
      "3",
      async () => editDigitsConfig(models.dir, (config) => delete config.versions["3"]!.signature),
      /digits\/3 is not signed, and this server only serves models signed by key/,
    ],
    [
      "signed by another key",
      "4",
      async () => void (await signVersions(models.dir, "digits", other, ["4"])),
      new RegExp(`digits/4 is signed by key ${other.keyId}, and this server only trusts key ${signer.keyId}`),
    ],
    [
      // The file changed and its sha256 in config.json with it: the checksum passes, the signature cannot.
      "tampered after signing",
      "5",
      async () => {
        await signVersions(models.dir, "digits", signer, ["5"]);
        const file = join(models.dir, "digits", "5", "model.onnx");
        const bytes = readFileSync(file);
        bytes[bytes.length - 5]! ^= 0x01;
        writeFileSync(file, bytes);
        const sha256 = createHash("sha256").update(bytes).digest("hex");
        editDigitsConfig(models.dir, (config) => {
          config.versions["5"]!.sha256 = sha256;
        });
      },
      /digits\/5: the Ed25519 signature does not match the file .*altered or forged/,
    ],
    [
      // Version 1's signature copied into version 6's entry: it names version 1, so it does not verify.
      "carrying another version's signature",
      "6",
      async () => {},
      /digits\/6: the Ed25519 signature does not match/,
    ],
  ])("refuses a version %s, and the serving one keeps serving", async (_what, version, prepare, reason) => {
    await addVersion(models.dir, "digits", version);
    await prepare();
    const res = await load(version);
    expect(res).toMatchObject({ status: 400, body: { code: "load_failed" } });
    expect(res.body.error).toMatch(reason);
    expect(res.body.error).toMatch(/signature refused: .*the file will not be served; version 1 keeps serving/);
    expect(await served()).toBe("1");
  });
});

describe("a pool without a public key", () => {
  it("serves unsigned models and says so loudly: log, /v2 and a metric", async () => {
    const models = copyModels();
    const server = await startTestServer(testOptions(["--models", models.dir]));
    try {
      const warning = server.logs.find((l) => l.level === "warn" && l.msg.startsWith("MODEL SIGNATURES NOT VERIFIED"));
      expect(warning?.msg).toContain("serving unsigned models (no --model-public-key / MODEL_PUBLIC_KEY)");
      expect((await get(`${server.url}/v2`)).body.modelSignatures).toEqual({ required: false });
      expect(metric((await get(`${server.url}/metrics`)).body, "edgecascade_model_signatures_required")).toBe(0);
      expect((await post(`${server.url}/v1/classify`, classifyRows(0))).status).toBe(200);
    } finally {
      await server.shutdown();
      models.remove();
    }
  });

  it("with a public key and unsigned models, it never becomes ready and says why", async () => {
    const models = copyModels();
    const server = await startTestServer(
      testOptions(["--models", models.dir], { MODEL_PUBLIC_KEY: signer.publicKey }),
      {},
      {
        waitReady: false,
      },
    );
    try {
      await server.loaded;
      const ready = await get(`${server.url}/v2/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body.reasons.join("\n")).toMatch(/digits: signature refused: digits\/1 is not signed/);
    } finally {
      await server.shutdown();
      models.remove();
    }
  });
});
