import type { MiddlewareHandler } from "hono";
import { bearerToken } from "../../protocol/bearer.ts";
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

/** Who is calling: the rate limiter's client and the tenant. */
export interface Caller {
  client: string;
  tenant: Tenant;
}

export const ANONYMOUS: Tenant = { name: "anonymous", models: "*" };

/** The key a request presents: `Authorization: Bearer <key>` (protocol/bearer.ts) or `x-api-key: <key>`. */
export function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  return bearerToken(authorization) ?? (apiKeyHeader?.trim() || undefined);
}

/** Each accepted key's rate-limit client: `key:` and the first 16 hex digits of the key's SHA-256. */
export async function clientIds(keys: Iterable<string>): Promise<Map<string, string>> {
  const digest = async (key: string) => `key:${(await sha256Hex(encoder.encode(key))).slice(0, 16)}`;
  return new Map(await Promise.all([...keys].map(async (key) => [key, await digest(key)] as const)));
}

/** Per list of accepted keys, i.e. once per isolate: the keys are fixed when the environment is parsed. */
const knownKeys = new WeakMap<readonly TenantKey[], Promise<Map<string, Caller>>>();

async function keyTable(keys: readonly TenantKey[]): Promise<Map<string, Caller>> {
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

/** The caller of a request when no keys are configured: its client address, tenant `anonymous`. */
export function anonymousCaller(connectingIp: string | null): Caller {
  return { client: `ip:${connectingIp ?? "unknown"}`, tenant: ANONYMOUS };
}

/**
 * The caller of a request under the accepted keys (`API_KEYS`): with keys configured, the presented key's
 * client and tenant, or a 401 for none or an unknown one; without keys, the client address and `anonymous`.
 * The digests and tenants are built once per isolate, not per request.
 */
export async function identifyCaller(
  keys: readonly TenantKey[],
  headers: { authorization: string | null; apiKey: string | null; connectingIp: string | null },
): Promise<Caller> {
  if (keys.length === 0) return anonymousCaller(headers.connectingIp);
  const key = presentedKey(headers.authorization ?? undefined, headers.apiKey ?? undefined);
  if (!key) throw new Unauthorized("missing API key: send Authorization: Bearer <key> or x-api-key");
  let table = knownKeys.get(keys);
  if (!table) {
    table = keyTable(keys);
    knownKeys.set(keys, table);
  }
  const known = (await table).get(key);
  if (!known) throw new Unauthorized("invalid API key");
  return known;
}

/**
 * Optional API keys (`API_KEYS`, `identifyCaller`): sets `tenant` (name, the models the key may call, its own
 * limit) and `client` for the rate limiter: a digest of the key (the key itself never leaves this layer), or
 * the client IP when keys are off.
 */
export function apiKey(): MiddlewareHandler<AppEnv> {
  return async function apiKey(c, next) {
    const headers = c.req.raw.headers;
    const { client, tenant } = await identifyCaller(c.get("runtime").options.apiKeys, {
      authorization: headers.get("authorization"),
      apiKey: headers.get("x-api-key"),
      connectingIp: headers.get("cf-connecting-ip"),
    });
    c.set("client", client);
    c.set("tenant", tenant);
    await next();
  };
}
