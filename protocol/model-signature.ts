import { sha256Hex } from "./digest.ts";

/**
 * Ed25519 signatures of model files, verified with Web Crypto so that the pools (Node) and the Worker
 * (workerd) run the same code. What is signed is a statement naming the model, the version and the file's
 * SHA-256 and size: a verifier checks the file against that SHA-256 first (the pools and the Worker already
 * do), so the signature covers the bytes, and a signed file cannot be replayed as another model or version.
 */

/** `versions[v].signature` in config.json: which key signed, and the signature. */
export interface ModelFileSignature {
  /** Key id: the first 16 hex digits of the SHA-256 of the raw 32-byte public key. */
  key: string;
  /** The Ed25519 signature of `signedStatement(...)`, base64 (64 bytes). */
  ed25519: string;
}

/** The file a signature is about. */
export interface SignedFile {
  model: string;
  version: string;
  sha256: string;
  bytes: number;
}

const encoder = new TextEncoder();
/** Raw Ed25519 public keys are 32 bytes: 44 base64 characters with one `=`. */
const PUBLIC_KEY_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

/** The bytes an Ed25519 signature of a model file covers. */
export function signedStatement(file: SignedFile): Uint8Array {
  return encoder.encode(
    `edgecascade model file v1\nmodel ${file.model}\nversion ${file.version}\nsha256 ${file.sha256}\nbytes ${file.bytes}\n`,
  );
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** A Web Crypto key in both runtimes' type libraries (Node's and workers-types name the class differently). */
type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A configured public key: the Web Crypto key and its id. */
export interface ModelPublicKey {
  id: string;
  key: WebCryptoKey;
}

/** Whether `text` has the shape of a raw Ed25519 public key in base64 (checked before any import). */
export function isPublicKeyText(text: string): boolean {
  return PUBLIC_KEY_BASE64.test(text.trim());
}

/** The key id of a raw 32-byte public key. */
export async function keyIdOf(raw: Uint8Array): Promise<string> {
  return (await sha256Hex(raw)).slice(0, 16);
}

/** Import a public key given as base64 of its 32 raw bytes (what `npm run model -- keygen` prints). */
export async function importModelPublicKey(text: string): Promise<ModelPublicKey> {
  if (!isPublicKeyText(text)) {
    throw new Error(
      "must be an Ed25519 public key: base64 of 32 bytes (44 characters), as `npm run model -- keygen` prints",
    );
  }
  const raw = fromBase64(text.trim());
  const key = await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
  return { id: await keyIdOf(raw), key };
}

/**
 * Why the signature of `file` does not verify with `publicKey`, or undefined when it does. The reasons are
 * what operators read in load failures: unsigned, signed by another key, or a signature that does not match
 * (tampered file entry, or a forged signature).
 */
export async function signatureProblem(
  publicKey: ModelPublicKey,
  file: SignedFile,
  signature: ModelFileSignature | undefined,
): Promise<string | undefined> {
  const what = `${file.model}/${file.version}`;
  if (!signature) return `${what} is not signed, and this server only serves models signed by key ${publicKey.id}`;
  if (signature.key !== publicKey.id) {
    return `${what} is signed by key ${signature.key}, and this server only trusts key ${publicKey.id}`;
  }
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(signature.ed25519);
  } catch {
    return `${what}: the signature is not base64`;
  }
  const ok =
    bytes.length === 64 &&
    (await crypto.subtle.verify({ name: "Ed25519" }, publicKey.key, bytes, signedStatement(file)));
  return ok
    ? undefined
    : `${what}: the Ed25519 signature does not match the file (sha256 ${file.sha256}); it was altered or forged`;
}
