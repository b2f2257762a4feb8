import type { MiddlewareHandler } from "hono";
import { sha256Hex } from "../../protocol/digest.ts";
import { Unauthorized } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";
import { KeyWindow } from "../tenants/key-window.ts";
import type { TenantKey } from "../tenants/keys.ts";

const encoder = new TextEncoder();

/** Who a request is from, once its key is checked. */
export interface Tenant {
  /** The key's tenant, or `key:<digest>` for a key without one; `anonymous` when no keys are configured. */
  name: string;
  /** Models the key may call. */
  models: TenantKey["models"];
  /** The key's own rate limit, when it has one (one window per key, per isolate). */
  window?: KeyWindow;
}

export const ANONYMOUS: Tenant = { name: "anonymous", models: "*" };

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

interface KnownKey {
  client: string;
  tenant: Tenant;
}

/** Per list of accepted keys, i.e. once per isolate: the keys are fixed when the environment is parsed. */
const knownKeys = new WeakMap<readonly TenantKey[], Promise<Map<string, KnownKey>>>();

async function keyTable(keys: readonly TenantKey[]): Promise<Map<string, KnownKey>> {
  const clients = await clientIds(keys.map((k) => k.key));
  return new Map(
    keys.map((k) => {
      const client = clients.get(k.key)!;
      const tenant: Tenant = {
        name: k.tenant ?? client,
        models: k.models,
        ...(k.rateLimit ? { window: new KeyWindow(k.rateLimit) } : {}),
      };
      return [k.key, { client, tenant }];
    }),
  );
}

/**
 * Optional API keys (`API_KEYS`): when any are configured, a request without one of them is a 401. Sets
 * `tenant` (name, the models the key may call, its own limit) and `client` for the rate limiter: a digest of
 * the key (the key itself never leaves this layer), or the client IP when keys are off. The digests and
 * tenants are built once, not per request.
 */
export function apiKey(): MiddlewareHandler<AppEnv> {
  return async function apiKey(c, next) {
    const keys = c.get("runtime").options.apiKeys;
    if (keys.length > 0) {
      const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
      if (!key) throw new Unauthorized("missing API key: send Authorization: Bearer <key> or x-api-key");
      let table = knownKeys.get(keys);
      if (!table) {
        table = keyTable(keys);
        knownKeys.set(keys, table);
      }
      const known = (await table).get(key);
      if (!known) throw new Unauthorized("invalid API key");
      c.set("client", known.client);
      c.set("tenant", known.tenant);
    } else {
      c.set("client", `ip:${c.req.header("cf-connecting-ip") ?? "unknown"}`);
      c.set("tenant", ANONYMOUS);
    }
    await next();
  };
}
