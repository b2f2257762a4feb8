import { sha256Hex } from "./digest.ts";
import { type ModelFileSignature, type ModelPublicKey, signatureProblem } from "./model-signature.ts";

/**
 * The one check of a model file's bytes against its config.json entry: size and SHA-256 first, then (with a
 * key) the Ed25519 signature of the statement naming the model, version, SHA-256 and size. Web Crypto only,
 * so the pools, the Worker and the model tools run the same code and report the same reasons.
 */

/** What config.json lists for a version's file (`versions[v]`). */
export interface ListedModelFile {
  file: string;
  sha256: string;
  bytes: number;
  signature?: ModelFileSignature;
}

/** What the bytes are, and why they are refused (each undefined when that step passes). */
export interface ModelFileCheck {
  sha256: string;
  bytes: number;
  /** The bytes' size or SHA-256 differs from the entry. */
  checksumProblem?: string;
  /** With a key: the signature is missing, by another key, or does not verify (against the bytes' SHA-256). */
  signatureProblem?: string;
}

/**
 * Check `bytes` of `model` `version` against its `listed` entry. The signature is verified whenever a key is
 * given, even after a checksum mismatch, so that the model tool reports both; loaders refuse on the first
 * (`modelFileProblem`).
 */
export async function checkModelFile(
  bytes: Uint8Array,
  model: string,
  version: string,
  listed: ListedModelFile,
  publicKey?: ModelPublicKey,
): Promise<ModelFileCheck> {
  const sha256 = await sha256Hex(bytes);
  const check: ModelFileCheck = { sha256, bytes: bytes.byteLength };
  if (sha256 !== listed.sha256 || bytes.byteLength !== listed.bytes) {
    check.checksumProblem =
      `checksum mismatch: ${model}/${version}/${listed.file} has sha256 ${sha256} (${bytes.byteLength} bytes), ` +
      `config.json says ${listed.sha256} (${listed.bytes} bytes)`;
  }
  if (publicKey) {
    const file = { model, version, sha256, bytes: bytes.byteLength };
    check.signatureProblem = await signatureProblem(publicKey, file, listed.signature);
  }
  return check;
}

/** Why a loader must refuse the file (the checksum first, then the signature), or undefined when it may load. */
export function modelFileProblem(check: ModelFileCheck): string | undefined {
  if (check.checksumProblem) return check.checksumProblem;
  return check.signatureProblem && `signature refused: ${check.signatureProblem}`;
}
