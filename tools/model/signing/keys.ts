import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import {
  keyIdOf,
  type ModelFileSignature,
  type SignedFile,
  signedStatement,
  toBase64,
} from "../../../protocol/model-signature.ts";
import { RefusedError } from "../../cli/errors.ts";

/** The environment variable naming the private key file, for `import`, `sign` and `npm run models`. */
export const SIGNING_KEY_ENV = "MODEL_SIGNING_KEY";
/** File names `keygen` writes. */
export const PRIVATE_KEY_FILE = "model-signing.key";
export const PUBLIC_KEY_FILE = "model-signing.pub";

/**
 * Where `keygen` writes by default: `$XDG_CONFIG_HOME/edgecascade` (else `~/.config/edgecascade`), outside
 * any checkout, so that a private key cannot be committed by accident.
 */
export function defaultKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "edgecascade");
}

/** An Ed25519 private key ready to sign model files, with the id of its public key. */
export interface ModelSigner {
  keyId: string;
  /** The public key as base64 of its 32 raw bytes: what pools (`--model-public-key`) and the Worker are given. */
  publicKey: string;
  sign(file: SignedFile): ModelFileSignature;
}

/** The raw 32 bytes of an Ed25519 public key (the tail of its SPKI DER encoding). */
function rawPublicKey(key: KeyObject): Uint8Array {
  const der = createPublicKey(key).export({ format: "der", type: "spki" });
  return new Uint8Array(der.subarray(der.length - 32));
}

export async function signerOf(privateKey: KeyObject): Promise<ModelSigner> {
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw new RefusedError(`the signing key is ${privateKey.asymmetricKeyType}, not Ed25519 (make one with keygen)`);
  }
  const raw = rawPublicKey(privateKey);
  const keyId = await keyIdOf(raw);
  return {
    keyId,
    publicKey: toBase64(raw),
    sign: (file) => ({ key: keyId, ed25519: toBase64(sign(null, signedStatement(file), privateKey)) }),
  };
}

/** Read a PKCS#8 PEM private key (as `keygen` writes it); refused with the reason when it is not one. */
export async function readSigner(path: string): Promise<ModelSigner> {
  const pem = await readFile(path, "utf8").catch((err: Error) => {
    throw new RefusedError(`cannot read the signing key ${path}: ${err.message}`);
  });
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new RefusedError(`${path} is not a PEM private key: ${(err as Error).message}`);
  }
  return signerOf(key);
}

/** The signer named by a `--signing-key` flag, else by MODEL_SIGNING_KEY; none: files are not signed. */
export async function signerFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ModelSigner | undefined> {
  const path = flag ?? (env[SIGNING_KEY_ENV] || undefined);
  return path ? readSigner(path) : undefined;
}

/** A new key pair: the private key as PKCS#8 PEM, the public key as base64 of its raw bytes. */
export async function generateModelKeys(): Promise<{ privatePem: string; publicKey: string; keyId: string }> {
  const { privateKey } = generateKeyPairSync("ed25519");
  const signer = await signerOf(privateKey);
  return {
    privatePem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    publicKey: signer.publicKey,
    keyId: signer.keyId,
  };
}
