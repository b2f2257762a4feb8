import { createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "./digest.ts";
import { checkModelFile, type ListedModelFile, modelFileProblem } from "./model-file-check.ts";
import { importModelPublicKey, signedStatement, toBase64 } from "./model-signature.ts";

const bytes = new TextEncoder().encode("not really onnx, but bytes all the same");

async function signedListing() {
  const { privateKey } = generateKeyPairSync("ed25519");
  const der = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicKey = await importModelPublicKey(toBase64(new Uint8Array(der.subarray(der.length - 32))));
  const sha256 = await sha256Hex(bytes);
  const statement = signedStatement({ model: "digits", version: "2", sha256, bytes: bytes.length });
  const listed: ListedModelFile = {
    file: "model.onnx",
    sha256,
    bytes: bytes.length,
    signature: { key: publicKey.id, ed25519: toBase64(sign(null, statement, privateKey)) },
  };
  return { publicKey, listed };
}

describe("checkModelFile", () => {
  it("passes bytes that match their entry and its signature", async () => {
    const { publicKey, listed } = await signedListing();
    const check = await checkModelFile(bytes, "digits", "2", listed, publicKey);
    expect(check).toEqual({ sha256: listed.sha256, bytes: bytes.length, signatureProblem: undefined });
    expect(modelFileProblem(check)).toBeUndefined();
  });

  it("passes an unsigned file when no key is given, and does not look at the signature", async () => {
    const { listed } = await signedListing();
    const check = await checkModelFile(bytes, "digits", "2", { ...listed, signature: undefined });
    expect(check).toEqual({ sha256: listed.sha256, bytes: bytes.length });
  });

  it("names the file, both digests and both sizes when the bytes differ from the entry", async () => {
    const { listed } = await signedListing();
    const altered = bytes.slice();
    altered[0] = altered[0]! ^ 1;
    const check = await checkModelFile(altered, "digits", "2", listed);
    const actual = await sha256Hex(altered);
    expect(check.checksumProblem).toBe(
      `checksum mismatch: digits/2/model.onnx has sha256 ${actual} (${bytes.length} bytes), ` +
        `config.json says ${listed.sha256} (${bytes.length} bytes)`,
    );
    expect(modelFileProblem(check)).toBe(check.checksumProblem);
  });

  it("refuses a size mismatch even when the digest is listed as the bytes'", async () => {
    const { listed } = await signedListing();
    const check = await checkModelFile(bytes, "digits", "2", { ...listed, bytes: bytes.length + 1 });
    expect(check.checksumProblem).toMatch(/^checksum mismatch: .* config\.json says [0-9a-f]{64} \(\d+ bytes\)$/);
  });

  it("reports both problems for altered bytes with a key, the checksum first for loaders", async () => {
    const { publicKey, listed } = await signedListing();
    const check = await checkModelFile(bytes.subarray(1), "digits", "2", listed, publicKey);
    expect(check.checksumProblem).toMatch(/^checksum mismatch/);
    expect(check.signatureProblem).toMatch(/the Ed25519 signature does not match the file/);
    expect(modelFileProblem(check)).toBe(check.checksumProblem);
  });

  it.each([
    ["unsigned", "2", { signature: undefined }, "digits/2 is not signed"],
    ["replayed as another version", "3", {}, "digits/3: the Ed25519 signature does not match the file"],
  ])("refuses a file %s when a key is given", async (_what, version, change, reason) => {
    const { publicKey, listed } = await signedListing();
    const check = await checkModelFile(bytes, "digits", version, { ...listed, ...change }, publicKey);
    expect(check.checksumProblem).toBeUndefined();
    expect(modelFileProblem(check)).toContain(`signature refused: ${reason}`);
  });
});
