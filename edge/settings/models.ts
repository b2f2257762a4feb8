import * as v from "valibot";
import { isPublicKeyText } from "../../protocol/model-signature.ts";
import { parseOrDescribe } from "../../protocol/schema-message.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/table.ts";
import { jsonValue } from "./json-value.ts";

const thresholdsSchema = v.record(
  v.string(),
  v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]")),
);

function parseThresholds(raw: string): Record<string, number> {
  const value = jsonValue(raw);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`must be an object of model name -> threshold, got ${JSON.stringify(raw)}`);
  }
  const parsed = parseOrDescribe(thresholdsSchema, value);
  if (!parsed.ok) throw new UsageError(parsed.message);
  return parsed.value;
}

/**
 * The edge variants: the memory their sessions may take, where newer ones come from, the key they are signed
 * with, and the cascade's thresholds.
 */
export const MODEL_SETTINGS = defineTable({
  edgeSessionMemoryMb: {
    env: "EDGE_SESSION_MEMORY_MB",
    type: "number",
    min: 0.1,
    max: 96,
    default: 32,
    unit: "MiB",
    help: "memory the edge variants' sessions may be counted as in one isolate; past it the least recently used are released",
  },
  edgeSessionReplacementsPerSecond: {
    env: "EDGE_SESSION_REPLACEMENTS_PER_SECOND",
    type: "number",
    min: 0,
    max: 1000,
    default: 2,
    unit: "sessions",
    help: "past EDGE_SESSION_MEMORY_MB, sessions one isolate may create a second in place of others after forwarded answers (TinyLFU admits them first); 0 = none",
  },
  modelRegistryPrefix: {
    env: "MODEL_REGISTRY_PREFIX",
    type: "parsed",
    default: "models",
    defaultText: "`models`",
    help: "with the MODEL_REGISTRY binding: where the model registry's tree starts in the R2 bucket (the pools' s3://BUCKET/PREFIX)",
    parse(raw): string {
      const prefix = raw.trim().replace(/^\/+|\/+$/g, "");
      if (!/^[\w./-]*$/.test(prefix) || prefix.split("/").some((p) => p === "." || p === "..")) {
        throw new UsageError(`must be a key prefix such as "models", got ${JSON.stringify(raw)}`);
      }
      return prefix;
    },
  },
  modelPublicKey: {
    env: "MODEL_PUBLIC_KEY",
    type: "parsed",
    defaultText: "unset",
    help: "Ed25519 public key (base64 of 32 bytes) the edge models must be signed with; unset: unsigned models load",
    parse(raw): string | undefined {
      if (raw.trim() === "") return undefined;
      if (!isPublicKeyText(raw)) {
        throw new UsageError("must be an Ed25519 public key, base64 of 32 bytes (npm run model -- keygen)");
      }
      return raw.trim();
    },
  },
  cascadeThresholds: {
    env: "CASCADE_THRESHOLDS",
    type: "parsed",
    default: {},
    defaultText: "`{}`",
    help: "cascade thresholds in [0, 1] by logical model name, replacing the calibrated ones",
    parse: parseThresholds,
  },
});
