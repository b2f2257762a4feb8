import { S3Registry } from "../../registry/s3-registry.ts";
import type { EdgeWorker } from "./edge-worker.ts";
import type { LocalRegistry } from "./local-registry.ts";

/** The Worker's binding of the registry's bucket (wrangler.toml's `[[r2_buckets]]` in deployed environments). */
export const REGISTRY_BINDING = "MODEL_REGISTRY";

export interface RegistryRelay {
  /** Resolves once every change seen so far is in Miniflare's R2 and the Worker's cron has run on it. */
  settled(): Promise<void>;
  close(): void;
}

/**
 * What Cloudflare does in production, locally: there, the registry's bucket *is* the Worker's R2 bucket (the tools
 * write it through R2's S3 API) and the cron copies its served states into KV each minute. Here the tools write
 * the local S3 server, so each object written there is copied into Miniflare's R2 (the one store the Worker's
 * binding can read), and the Worker's scheduled handler (the cron) runs after each change instead of each minute.
 */
export async function relayRegistry(registry: LocalRegistry, worker: EdgeWorker): Promise<RegistryRelay> {
  const s3 = new S3Registry({ url: `s3://${registry.bucket}`, endpoint: registry.endpoint, env: registry.env });
  const r2 = await worker.miniflare.getR2Bucket(REGISTRY_BINDING);
  let chain: Promise<void> = Promise.resolve();
  let closed = false;
  const copy = async (keys: string[]) => {
    for (const key of keys) {
      const bytes = await s3.object(key);
      if (bytes) await r2.put(key, bytes);
    }
    if (!closed) await worker.scheduled();
  };
  // Changes that arrive while a copy waits join it: one copy and one cron run for a publication's objects.
  let waiting: Set<string> | undefined;
  const enqueue = (keys: string[]) => {
    if (waiting) {
      for (const key of keys) waiting.add(key);
      return;
    }
    waiting = new Set(keys);
    chain = chain
      .then(() => {
        const batch = [...waiting!];
        waiting = undefined;
        return copy(batch);
      })
      .catch((err: Error) => console.error(`registry relay: ${err.message}`));
  };
  enqueue(await s3.keys());
  registry.onChange((key, event) => {
    if (event.startsWith("ObjectCreated")) enqueue([key]);
  });
  return {
    settled: () => chain,
    close() {
      closed = true;
      s3.close();
    },
  };
}
