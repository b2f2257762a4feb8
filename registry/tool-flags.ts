import { UsageError } from "../tools/cli/errors.ts";
import { S3Registry } from "./s3-registry.ts";

/** The variable `--registry` falls back to in the tools. */
export const REGISTRY_ENV = "EDGECASCADE_REGISTRY";

/** `--registry` and `--registry-endpoint`, as `npm run model -- publish` and `npm run rollout` take them. */
export const REGISTRY_FLAGS = {
  registry: {
    type: "string",
    placeholder: "s3://BUCKET/PREFIX",
    defaultText: `$${REGISTRY_ENV}`,
    help: "the model registry (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; the publishing ones)",
  },
  "registry-endpoint": {
    type: "string",
    placeholder: "URL",
    defaultText: "$AWS_ENDPOINT_URL_S3, else AWS's",
    help: "an S3-compatible endpoint: R2 (https://<account>.r2.cloudflarestorage.com), MinIO, a local server",
  },
} as const;

/** The registry the flags name, or undefined when neither the flag nor the variable does. */
export function registryFrom(values: {
  registry?: string | undefined;
  "registry-endpoint"?: string | undefined;
}): S3Registry | undefined {
  const url = values.registry ?? (process.env[REGISTRY_ENV] || undefined);
  if (url === undefined) return undefined;
  try {
    return new S3Registry({ url, endpoint: values["registry-endpoint"] });
  } catch (err) {
    throw new UsageError(`--registry: ${(err as Error).message}`);
  }
}
