import * as v from "valibot";
import { parseOrDescribe } from "../../protocol/schema-message.ts";

/** A tenant's own request budget: `requests` per `periodS` seconds. */
export interface KeyRateLimit {
  requests: number;
  periodS: number;
}

/** One accepted API key and what it may do. */
export interface TenantKey {
  key: string;
  /** Shown in `/status` and in messages; several keys (a rotation) may share one. Default: a digest of the key. */
  tenant?: string;
  /** Models the key may call; `"*"`: every served model. */
  models: ReadonlySet<string> | "*";
  /** The key's own limit, on top of the RATE_LIMITER binding's per-client limit; none by default. */
  rateLimit?: KeyRateLimit;
}

const keySchema = v.strictObject({
  key: v.pipe(v.string(), v.regex(/^[\x21-\x7e]{1,256}$/, "must be 1-256 printable characters without spaces")),
  tenant: v.optional(v.pipe(v.string(), v.regex(/^[\w.-]{1,64}$/, "must be 1-64 letters, digits, '.', '_' or '-'"))),
  models: v.optional(v.union([v.literal("*"), v.array(v.string())])),
  rateLimit: v.optional(
    v.strictObject({
      requests: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1")),
      periodS: v.pipe(v.number(), v.minValue(1, "must be at least 1"), v.maxValue(86_400, "must be at most 86400")),
    }),
  ),
});
const keysSchema = v.array(keySchema);

/**
 * `API_KEYS`: either a comma-separated list of keys (each may call every model, no limit of its own), or a
 * JSON array of `{"key", "tenant"?, "models"?, "rateLimit"?: {"requests", "periodS"}}`. Models must be ones the
 * Worker serves, so that a typo in a scope is an error at start-up rather than a key that can call nothing.
 * Errors name the field (`API_KEYS[1].models`).
 */
export function parseTenantKeys(raw: string | undefined, served: readonly string[]): TenantKey[] {
  const text = (raw ?? "").trim();
  if (text === "") return [];
  let keys: TenantKey[];
  if (!text.startsWith("[") && !text.startsWith("{")) {
    keys = text
      .split(",")
      .map((k) => k.trim())
      .filter((k) => k !== "")
      .map((key) => ({ key, models: "*" }));
  } else {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new Error(`API_KEYS: invalid JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(json)) throw new Error("API_KEYS: must be a JSON array of keys, or keys separated by commas");
    const parsed = parseOrDescribe(keysSchema, json);
    // valibot names array items as "0.models"; the message says "[0].models", as the other errors do.
    if (!parsed.ok) throw new Error(`API_KEYS: ${parsed.message.replace(/"(\d+)(\.|")/g, '"[$1]$2')}`);
    keys = parsed.value.map((entry, i) => {
      const models = entry.models ?? "*";
      if (models !== "*") {
        const unknown = models.find((m) => !served.includes(m));
        if (unknown !== undefined) {
          throw new Error(
            `API_KEYS[${i}].models: unknown model "${unknown}"; this Worker serves ${served.map((m) => `"${m}"`).join(", ")}`,
          );
        }
      }
      return {
        key: entry.key,
        ...(entry.tenant ? { tenant: entry.tenant } : {}),
        models: models === "*" ? "*" : new Set(models),
        ...(entry.rateLimit ? { rateLimit: entry.rateLimit } : {}),
      };
    });
  }
  const seen = new Set<string>();
  for (const [i, { key }] of keys.entries()) {
    if (seen.has(key)) throw new Error(`API_KEYS[${i}]: the same key is listed twice`);
    seen.add(key);
  }
  return keys;
}

/** Whether a key's scope covers a model. */
export function mayCall(models: TenantKey["models"], model: string): boolean {
  return models === "*" || models.has(model);
}
