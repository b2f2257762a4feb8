import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import {
  CONFIG_FILE,
  parseRegistryUrl,
  type RegistryLocation,
  registryKey,
  SERVED_FILE,
} from "../protocol/registry/layout.ts";
import { parseServedState, type ServedState } from "../protocol/registry/served-state.ts";

/**
 * The model registry through the S3 API (@aws-sdk/client-s3): R2, S3, GCS's interoperability endpoint, MinIO,
 * and s3rver in tests and the local stack. Credentials come from the SDK's standard chain (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, a profile, a pod's web identity); the endpoint from `endpoint`, else
 * AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (R2: `https://<account>.r2.cloudflarestorage.com`), with path-style
 * addressing, which R2 and MinIO take. Pools and the Worker only read; `npm run model -- publish` and
 * `npm run rollout` write (docs/deploy.md: two credentials).
 */

export interface RegistryOptions {
  /** `s3://bucket/prefix`. */
  url: string;
  /** An S3-compatible endpoint; default AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS's own. */
  endpoint?: string | undefined;
  /** Milliseconds one request may take. Default 10000. */
  timeoutMs?: number;
  /**
   * The environment to read the endpoint, the region and (only when given) the credentials from: the local
   * stack's own registry. Default process.env, with credentials from the SDK's whole chain.
   */
  env?: Record<string, string | undefined>;
}

/** An object read: its bytes and ETag (the version of it that was read). */
export interface RegistryObject {
  bytes: Uint8Array;
  etag: string;
}

/** A registry request that failed for another reason than a missing key, naming the registry and the key. */
export class RegistryError extends Error {}

export class S3Registry {
  readonly location: RegistryLocation;
  /** `s3://bucket/prefix` (and the endpoint, when not AWS's), for messages. */
  readonly where: string;
  readonly #s3: S3Client;

  constructor(options: RegistryOptions) {
    const env = options.env ?? process.env;
    this.location = parseRegistryUrl(options.url);
    const endpoint = options.endpoint || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || (endpoint ? "auto" : "us-east-1");
    const timeoutMs = options.timeoutMs ?? 10_000;
    const explicit = options.env?.AWS_ACCESS_KEY_ID && options.env.AWS_SECRET_ACCESS_KEY;
    this.#s3 = new S3Client({
      region,
      ...(explicit
        ? {
            credentials: {
              accessKeyId: options.env!.AWS_ACCESS_KEY_ID!,
              secretAccessKey: options.env!.AWS_SECRET_ACCESS_KEY!,
            },
          }
        : {}),
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      maxAttempts: 2,
      requestHandler: { requestTimeout: timeoutMs, connectionTimeout: Math.min(timeoutMs, 3000) },
    });
    const { bucket, prefix } = this.location;
    this.where = `s3://${bucket}${prefix ? `/${prefix}` : ""}${endpoint ? ` at ${endpoint}` : ""}`;
  }

  key(...parts: string[]): string {
    return registryKey(this.location.prefix, ...parts);
  }

  #fail(op: string, key: string, err: unknown): RegistryError {
    const name = err instanceof S3ServiceException ? `${err.name} (HTTP ${err.$metadata.httpStatusCode})` : "";
    return new RegistryError(
      `registry ${this.where}: ${op} ${key}: ${[name, (err as Error).message].filter(Boolean).join(": ")}`,
    );
  }

  /**
   * The object at `parts`, or undefined when there is none; `"unchanged"` when `etag` is given and is still its
   * version (a conditional GET: a poll of an unchanged object moves no bytes).
   */
  async get(parts: string[], etag?: string): Promise<RegistryObject | "unchanged" | undefined> {
    const key = this.key(...parts);
    try {
      const res = await this.#s3.send(
        new GetObjectCommand({ Bucket: this.location.bucket, Key: key, ...(etag ? { IfNoneMatch: etag } : {}) }),
      );
      const bytes = await res.Body!.transformToByteArray();
      return { bytes, etag: res.ETag ?? "" };
    } catch (err) {
      const status = (err as S3ServiceException).$metadata?.httpStatusCode;
      if (status === 304) return "unchanged";
      if (status === 404 || (err as Error).name === "NoSuchKey") return undefined;
      throw this.#fail("GET", key, err);
    }
  }

  /** The object at `parts` as JSON, or undefined; throws naming the key when it is not JSON. */
  async getJson(parts: string[]): Promise<{ value: unknown; etag: string } | undefined> {
    const got = await this.get(parts);
    if (got === undefined || got === "unchanged") return undefined;
    return { value: parseJson(got.bytes, `registry ${this.where}: ${this.key(...parts)}`), etag: got.etag };
  }

  /**
   * Write an object. `ifMatch`: only over the version read (a served state's compare-and-swap; S3 and R2 refuse
   * with 412 when another write came between; s3rver ignores the condition); `ifNoneMatch: "*"`: only where none is.
   */
  async put(
    parts: string[],
    body: Uint8Array | string,
    options: { contentType?: string; ifMatch?: string; ifNoneMatch?: "*" } = {},
  ): Promise<string> {
    const key = this.key(...parts);
    try {
      const res = await this.#s3.send(
        new PutObjectCommand({
          Bucket: this.location.bucket,
          Key: key,
          Body: body,
          ContentType: options.contentType ?? "application/octet-stream",
          ...(options.ifMatch ? { IfMatch: options.ifMatch } : {}),
          ...(options.ifNoneMatch ? { IfNoneMatch: options.ifNoneMatch } : {}),
        }),
      );
      return res.ETag ?? "";
    } catch (err) {
      if ((err as S3ServiceException).$metadata?.httpStatusCode === 412) {
        throw new RegistryError(
          `registry ${this.where}: ${key} changed since it was read (another writer); read it again`,
        );
      }
      throw this.#fail("PUT", key, err);
    }
  }

  /** The models the registry holds: the names under the prefix with a config.json, sorted. */
  async models(): Promise<string[]> {
    const { bucket, prefix } = this.location;
    const under = prefix ? `${prefix}/` : "";
    const names: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.#s3.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: under, Delimiter: "/", ContinuationToken: token }),
        );
        for (const p of page.CommonPrefixes ?? []) {
          const name = p.Prefix?.slice(under.length).replace(/\/$/, "");
          if (name) names.push(name);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw this.#fail("LIST", under || "/", err);
    }
    const withConfig = await Promise.all(names.map(async (n) => ((await this.get([n, CONFIG_FILE])) ? n : undefined)));
    return withConfig.filter((n): n is string => n !== undefined).sort();
  }

  /** Every key under the prefix (the local stack's copy into Miniflare's R2). */
  async keys(): Promise<string[]> {
    const { bucket, prefix } = this.location;
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.#s3.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix ? `${prefix}/` : "", ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw this.#fail("LIST", prefix || "/", err);
    }
    return keys;
  }

  /** The object at a full key (not under the prefix), or undefined. */
  async object(key: string): Promise<Uint8Array | undefined> {
    const { prefix } = this.location;
    const parts = prefix && key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1).split("/") : key.split("/");
    const got = await (prefix && key.startsWith(`${prefix}/`) ? this.get(parts) : this.#raw(key));
    return got === undefined || got === "unchanged" ? undefined : got.bytes;
  }

  async #raw(key: string): Promise<RegistryObject | undefined> {
    try {
      const res = await this.#s3.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      return { bytes: await res.Body!.transformToByteArray(), etag: res.ETag ?? "" };
    } catch (err) {
      if ((err as S3ServiceException).$metadata?.httpStatusCode === 404) return undefined;
      throw this.#fail("GET", key, err);
    }
  }

  /** `<model>/served.json`, checked, with its ETag; undefined when the model has none (never published). */
  async served(model: string): Promise<{ state: ServedState; etag: string } | undefined> {
    const got = await this.getJson([model, SERVED_FILE]);
    if (!got) return undefined;
    return {
      state: servedOrThrow(got.value, `registry ${this.where}: ${this.key(model, SERVED_FILE)}`),
      etag: got.etag,
    };
  }

  /**
   * Write `next` as `<model>/served.json` over the version read (`etag`), or where none is (`undefined`): a
   * second writer that read the same version is refused (S3, R2) instead of silently replacing this one.
   */
  writeServed(next: ServedState, etag: string | undefined): Promise<string> {
    return this.put([next.model, SERVED_FILE], `${JSON.stringify(next, null, 2)}\n`, {
      contentType: "application/json",
      ...(etag ? { ifMatch: etag } : { ifNoneMatch: "*" }),
    });
  }

  close(): void {
    this.#s3.destroy();
  }
}

export function parseJson(bytes: Uint8Array, source: string): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new RegistryError(`${source}: not JSON: ${(err as Error).message}`);
  }
}

export function servedOrThrow(raw: unknown, source: string): ServedState {
  const parsed = parseServedState(raw);
  if (!parsed.ok) throw new RegistryError(`${source}: ${parsed.message}`);
  return parsed.value;
}
