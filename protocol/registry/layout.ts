/**
 * The model registry's layout: an S3-compatible bucket (R2, S3, GCS interop, MinIO) holding, under a prefix, the
 * same tree as `models/` (`<model>/config.json`, `<model>/<version>/<file>`, `<model>/<version>/heldout.json`:
 * the files and their signed config entries as `npm run model` wrote them) and, per model, `served.json`: the
 * served state (served-state.ts). Keys only; the clients are the pools' and tools' (registry/) and the Worker's
 * R2 binding (edge/registry/).
 */

export const CONFIG_FILE = "config.json";
export const SERVED_FILE = "served.json";

/** Where a registry is: `s3://bucket/prefix` (the prefix may be empty). */
export interface RegistryLocation {
  bucket: string;
  /** Without leading or trailing slashes; "" for the bucket's root. */
  prefix: string;
}

/** `s3://bucket/prefix`, or an error naming what is wrong. */
export function parseRegistryUrl(url: string): RegistryLocation {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url.trim());
  if (!m)
    throw new Error(
      `"${url}" is not s3://BUCKET/PREFIX (a bucket name of 3 to 63 lowercase letters, digits, "." or "-")`,
    );
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((part) => part === "." || part === "..")) {
    throw new Error(`"${url}": the prefix may not hold "." or ".." parts`);
  }
  return { bucket: m[1]!, prefix };
}

/** The key of `parts` under the registry's prefix. */
export function registryKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].filter((p) => p !== "").join("/");
}

/** The model a key under `prefix` belongs to (its first part), if it is one of the registry's. */
export function modelOfKey(prefix: string, key: string): string | undefined {
  const rest = prefix === "" ? key : key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : undefined;
  const name = rest?.split("/")[0];
  return name && name !== rest ? name : undefined;
}
