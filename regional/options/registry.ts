import { parseRegistryUrl } from "../../protocol/registry/layout.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";
import { matching } from "./matching.ts";

/** The model registry the pool follows (regional/registry/, docs/rollouts.md). */
export const REGISTRY_OPTIONS = defineTable({
  /**
   * The model registry this pool follows (regional/registry/): the served state of every model is read at start
   * and polled, each version's files are checked (sha256, signature) and kept in `--registry-cache`, and served
   * from there (`--models` is then unused). Needs `--model-public-key`: only signed files load from a registry.
   */
  registry: {
    flag: "registry",
    env: "REGIONAL_REGISTRY",
    type: "parsed",
    placeholder: "s3://BUCKET/PREFIX",
    defaultText: "none: serve --models",
    help: "follow this model registry (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, read-only); needs --model-public-key",
    parse(raw): string {
      try {
        parseRegistryUrl(raw);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      return raw.trim();
    },
  },
  /** An S3-compatible endpoint for the registry: R2, MinIO, GCS's interoperability endpoint, a local server. */
  registryEndpoint: {
    flag: "registry-endpoint",
    env: "AWS_ENDPOINT_URL_S3",
    type: "parsed",
    placeholder: "URL",
    defaultText: "AWS S3's",
    help: "the registry's S3-compatible endpoint (R2: https://<account>.r2.cloudflarestorage.com)",
    parse: matching(/^https?:\/\/[^\s/]+\/?$/, "an http(s) URL with no path"),
  },
  /** How often the pool reads the registry's served states; SIGHUP reads them at once. */
  registryPollMs: {
    flag: "registry-poll-ms",
    env: "REGIONAL_REGISTRY_POLL_MS",
    type: "number",
    integer: true,
    min: 100,
    max: 3_600_000,
    default: 10_000,
    placeholder: "MS",
    unit: "ms",
    help: "how often the served states are read from the registry (SIGHUP: at once)",
  },
  /** Where the files read from the registry are kept, checked, for the loads (an emptyDir in Kubernetes). */
  registryCache: {
    flag: "registry-cache",
    env: "REGIONAL_REGISTRY_CACHE",
    type: "string",
    placeholder: "DIR",
    defaultText: "a directory under the system's temporary one",
    help: "where checked files from the registry are kept for loading (one subdirectory per process)",
  },
});
