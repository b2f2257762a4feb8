/**
 * The few calls `npm run deploy` makes to Cloudflare's API itself, where wrangler would decide without asking
 * (Custom Domains that take over DNS records, rollbacks that bring back old secrets) or does not go (KV
 * namespace ids, Regional Services). The same credentials and API host as wrangler: CLOUDFLARE_API_TOKEN,
 * CLOUDFLARE_ACCOUNT_ID (or `account_id` in wrangler.toml) and CLOUDFLARE_API_BASE_URL. Each call is printed
 * before it is made.
 */

export class CloudflareApiError extends Error {
  readonly status: number;
  readonly code: number | undefined;
  constructor(status: number, code: number | undefined, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface CloudflareClient {
  accountId: string;
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export const DEFAULT_API_BASE = "https://api.cloudflare.com/client/v4";

export function cloudflareClient(
  env: NodeJS.ProcessEnv,
  configAccountId: string | undefined,
  log: (line: string) => void,
): CloudflareClient {
  const token = env.CLOUDFLARE_API_TOKEN;
  const accountId = env.CLOUDFLARE_ACCOUNT_ID || configAccountId;
  if (!token || !accountId) {
    throw new Error(
      "npm run deploy asks Cloudflare's API itself before it lets wrangler act (Custom Domains, KV namespaces, " +
        "rollbacks): set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID (docs/deploy.md, step 7)",
    );
  }
  const base = (env.CLOUDFLARE_API_BASE_URL || DEFAULT_API_BASE).replace(/\/$/, "");
  return {
    accountId,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      log(`$ cloudflare-api ${method} ${path}`);
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let payload: { success?: boolean; result?: T; errors?: { code?: number; message?: string }[] };
      try {
        payload = JSON.parse(text);
      } catch {
        throw new CloudflareApiError(
          response.status,
          undefined,
          `${method} ${path}: ${response.status} ${text.slice(0, 200)}`,
        );
      }
      if (!response.ok || payload.success === false) {
        const first = payload.errors?.[0];
        throw new CloudflareApiError(
          response.status,
          first?.code,
          first?.message ?? `${method} ${path} answered ${response.status}`,
        );
      }
      return payload.result as T;
    },
  };
}
