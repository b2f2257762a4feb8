import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

/** s3rver's one account: every request must be signed with it (any other key is refused, InvalidAccessKeyId). */
export const LOCAL_REGISTRY_CREDENTIALS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" } as const;

export interface LocalRegistryOptions {
  /** Port on 127.0.0.1. Default 0: a free one. */
  port?: number;
  /** The bucket. Default "edgecascade". */
  bucket?: string;
  /** The prefix the models live under. Default "models". */
  prefix?: string;
}

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>`, the endpoint override (AWS_ENDPOINT_URL_S3). */
  endpoint: string;
  /** `s3://<bucket>/<prefix>`: what `--registry` takes. */
  url: string;
  bucket: string;
  prefix: string;
  /** The variables a pool or a tool needs to reach it: credentials, endpoint, region. */
  env: Record<string, string>;
  /** Called with each key written or deleted (S3's event notifications, as s3rver emits them). */
  onChange(listener: (key: string, event: string) => void): void;
  close(): Promise<void>;
}

/**
 * A local S3-compatible server (s3rver, on the local disk under a temporary directory) holding the model
 * registry for tests and the local stack: the pools and the tools reach it through the same S3 client and
 * variables they use against R2 or S3, with the endpoint overridden.
 */
export async function startLocalRegistry(options: LocalRegistryOptions = {}): Promise<LocalRegistry> {
  const bucket = options.bucket ?? "edgecascade";
  const prefix = options.prefix ?? "models";
  const directory = mkdtempSync(join(tmpdir(), "edgecascade-registry-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: options.port ?? 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    url: `s3://${bucket}/${prefix}`,
    bucket,
    prefix,
    env: { ...LOCAL_REGISTRY_CREDENTIALS, AWS_ENDPOINT_URL_S3: endpoint, AWS_REGION: "auto" },
    onChange(listener) {
      server.on("event", (event) => {
        for (const r of event.Records) listener(decodeURIComponent(r.s3.object.key), r.eventName);
      });
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
