import { createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  importModelPublicKey,
  isPublicKeyText,
  type ModelFileSignature,
  type SignedFile,
  signatureProblem,
  signedStatement,
  toBase64,
} from "./model-signature.ts";

/** A key pair made here: the public key as pools and the Worker are given it, and a signer. */
async function keyPair() {
  const { privateKey } = generateKeyPairSync("ed25519");
  const der = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicText = toBase64(new Uint8Array(der.subarray(der.length - 32)));
  const publicKey = await importModelPublicKey(publicText);
  const signFile = (file: SignedFile): ModelFileSignature => ({
    key: publicKey.id,
    ed25519: toBase64(sign(null, signedStatement(file), privateKey)),
  });
  return { publicText, publicKey, signFile };
}

const file: SignedFile = { model: "digits", version: "2", sha256: "ab".repeat(32), bytes: 1234 };

describe("model file signatures", () => {
  it("verifies a signature of the same statement with the matching key", async () => {
    const { publicKey, signFile } = await keyPair();
    expect(publicKey.id).toMatch(/^[0-9a-f]{16}$/);
    expect(await signatureProblem(publicKey, file, signFile(file))).toBeUndefined();
  });

  it.each([
    ["another sha256", { sha256: "cd".repeat(32) }],
    ["another size", { bytes: 1235 }],
    ["another version", { version: "3" }],
    ["another model", { model: "digits-edge" }],
  ])("refuses a signature replayed for %s", async (_what, change) => {
    const { publicKey, signFile } = await keyPair();
    const problem = await signatureProblem(publicKey, { ...file, ...change }, signFile(file));
    expect(problem).toMatch(/the Ed25519 signature does not match the file .*altered or forged/);
  });

  it("says whether a file is unsigned, signed by another key, or malformed", async () => {
    const { publicKey } = await keyPair();
    const other = await keyPair();
    expect(await signatureProblem(publicKey, file, undefined)).toBe(
      `digits/2 is not signed, and this server only serves models signed by key ${publicKey.id}`,
    );
    expect(await signatureProblem(publicKey, file, other.signFile(file))).toBe(
      `digits/2 is signed by key ${other.publicKey.id}, and this server only trusts key ${publicKey.id}`,
    );
    // Right key id, forged bytes: another key's signature under this key's id.
    const forged = { key: publicKey.id, ed25519: other.signFile(file).ed25519 };
    expect(await signatureProblem(publicKey, file, forged)).toMatch(/does not match/);
    expect(await signatureProblem(publicKey, file, { key: publicKey.id, ed25519: "!!" })).toBe(
      "digits/2: the signature is not base64",
    );
  });

  it("accepts only base64 of 32 bytes as a public key", async () => {
    const { publicText } = await keyPair();
    expect(isPublicKeyText(publicText)).toBe(true);
    expect(isPublicKeyText(` ${publicText}\n`)).toBe(true);
    expect(isPublicKeyText(publicText.slice(1))).toBe(false);
    await expect(importModelPublicKey("not a key")).rejects.toThrow(/base64 of 32 bytes/);
  });
});
