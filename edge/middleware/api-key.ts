import type { MiddlewareHandler } from "hono";
import { sha256Hex } from "../../protocol/digest.ts";
import { Unauthorized } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";

const encoder = new TextEncoder();

/** The key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return bearer ?? (apiKeyHeader?.trim() || undefined);
}

/** Each accepted key's rate-limit client: `key:` and the first 16 hex digits of the key's SHA-256. */
export async function clientIds(keys: Iterable<string>): Promise<Map<string, string>> {
  const digest = async (key: string) => `key:${(await sha256Hex(encoder.encode(key))).slice(0, 16)}`;
  return new Map(await Promise.all([...keys].map(async (key) => [key, await digest(key)] as const)));
}

/** Per set of accepted keys, i.e. once per isolate: the keys are fixed when the environment is parsed. */
const knownClients = new WeakMap<ReadonlySet<string>, Promise<Map<string, string>>>();

/**
 * Optional API keys (`API_KEYS`): when any are configured, a request without one of them is a 401.
 * Sets `client` for the rate limiter: a digest of the key (the key itself never leaves this layer),
 * or the client IP when keys are off. The digests are computed once, not per request.
 */
export function apiKey(): MiddlewareHandler<AppEnv> {
  return async function apiKey(c, next) {
    const keys = c.get("runtime").options.apiKeys;
    const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (keys.size > 0) {
      if (!key) throw new Unauthorized("missing API key: send Authorization: Bearer <key> or x-api-key");
      let clients = knownClients.get(keys);
      if (!clients) {
        clients = clientIds(keys);
        knownClients.set(keys, clients);
      }
      const client = (await clients).get(key);
      if (!client) throw new Unauthorized("invalid API key");
      c.set("client", client);
    } else {
      c.set("client", `ip:${c.req.header("cf-connecting-ip") ?? "unknown"}`);
    }
    await next();
  };
}
