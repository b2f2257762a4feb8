/**
 * A stand-in for Cloudflare's API on loopback, for what cannot run here: the account a deploy talks to.
 * wrangler and `npm run deploy` reach it through CLOUDFLARE_API_BASE_URL, wrangler's own switch for another API
 * host. It answers the calls a deploy makes (Workers, versions, deployments, secrets, schedules, Custom Domains,
 * KV namespaces, zones, Regional Services hostnames) from the account of `cloudflare-account.ts`, records every
 * request, and answers anything else 404 "No route for that URI" (code 7003), as the API does, recording it in
 * `unknown` so that a test can tell the stand-in was asked something it does not know.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Account,
  ApiRefusal,
  type Binding,
  deploy,
  domainChangeset,
  Ids,
  latestVersion,
  newAccount,
  putDomains,
  putSecrets,
  type Script,
  script,
  uploadVersion,
  type Version,
  zoneOf,
} from "./cloudflare-account.ts";

/** One request: method, path with query, and body as text (latin1: multipart bodies stay byte for byte). */
export interface ApiCall {
  method: string;
  url: string;
  body: string;
}

export interface CloudflareApi {
  /** What CLOUDFLARE_API_BASE_URL is set to: `http://127.0.0.1:<port>/client/v4`. */
  baseUrl: string;
  account: Account;
  calls: ApiCall[];
  /** Requests no route answered. */
  unknown: ApiCall[];
  close(): Promise<void>;
}

export interface StandInOptions {
  accountId?: string;
  /** The account's zones; Regional Services is off unless said. */
  zones?: { name: string; regionalServices?: boolean }[];
  /** DNS records that exist before the deploy: hostname → what it points at, e.g. "A 192.0.2.1". */
  dnsRecords?: Record<string, string>;
  /** Workers that exist with these secrets (their values as set). */
  secrets?: Record<string, Record<string, string>>;
  /** KV namespaces that exist. */
  kvNamespaces?: { id: string; title: string }[];
}

export const STAND_IN_ACCOUNT = "0123456789abcdef0123456789abcdef";

type Params = Record<string, string>;
type Handler = (p: Params, body: () => Promise<unknown>, query: URLSearchParams) => Promise<unknown> | unknown;

export async function startCloudflareApi(options: StandInOptions = {}): Promise<CloudflareApi> {
  const account = newAccount(options.accountId ?? STAND_IN_ACCOUNT, options.zones ?? []);
  for (const [host, record] of Object.entries(options.dnsRecords ?? {})) account.dnsRecords.set(host, record);
  for (const ns of options.kvNamespaces ?? []) account.kvNamespaces.set(ns.id, ns);
  const ids = new Ids();
  const now = () => new Date().toISOString();
  for (const [name, secrets] of Object.entries(options.secrets ?? {})) {
    const s = newScript(account, name);
    const bindings = Object.entries(secrets).map(([n, text]) => ({ name: n, type: "secret_text", text }));
    const v = uploadVersion(s, { bindings }, ids, now());
    deploy(s, [{ version_id: v.id, percentage: 100 }], {}, true, ids, now());
  }

  const routes = apiRoutes(account, ids, now);
  const calls: ApiCall[] = [];
  const unknown: ApiCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      const call = { method: req.method!, url: req.url!, body: raw.toString("latin1") };
      calls.push(call);
      const url = new URL(req.url!, "http://stand-in");
      const path = url.pathname.replace(/^\/client\/v4/, "");
      let status = 200;
      let payload: object;
      try {
        const route = routes.find((r) => r.method === req.method && r.pattern.test(path));
        if (!route) {
          unknown.push(call);
          throw new ApiRefusal(404, 7003, "No route for that URI");
        }
        const params = route.pattern.exec(path)!.groups ?? {};
        const result = await route.handler(params, () => readBody(req, raw), url.searchParams);
        payload = { success: true, errors: [], messages: [], result: result ?? null };
      } catch (err) {
        const refusal = err instanceof ApiRefusal ? err : new ApiRefusal(500, 10013, (err as Error).message);
        status = refusal.status;
        payload = {
          success: false,
          errors: [{ code: refusal.code, message: refusal.message }],
          messages: [],
          result: null,
        };
      }
      res.statusCode = status;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    account,
    calls,
    unknown,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function newScript(account: Account, name: string): Script {
  const s: Script = { name, versions: [], deployments: [], schedules: [], workersDev: true };
  account.scripts.set(name, s);
  return s;
}

async function readBody(req: IncomingMessage, raw: Buffer): Promise<unknown> {
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("multipart/form-data")) {
    const form = await new Request("http://stand-in", {
      method: "POST",
      headers: { "content-type": type },
      body: raw,
    }).formData();
    const metadata = form.get("metadata");
    return JSON.parse(typeof metadata === "string" ? metadata : await (metadata as Blob).text());
  }
  return raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
}

/** A version as the API shows it: secrets by name only. */
function shown(v: Version) {
  return {
    id: v.id,
    number: v.number,
    metadata: {
      created_on: v.created_on,
      modified_on: v.created_on,
      source: "wrangler",
      author_email: "rehearsal@example.com",
    },
    annotations: { "workers/triggered_by": "upload", ...v.annotations },
    resources: {
      bindings: v.bindings.map(({ text: _text, ...b }) => b),
      script: { etag: `etag-${v.id}`, handlers: ["fetch", "scheduled"] },
      script_runtime: { usage_model: "standard" },
    },
    startup_time_ms: 0,
  };
}

function apiRoutes(account: Account, ids: Ids, now: () => string) {
  const A = "^/accounts/(?<account>[\\w-]+)";
  const W = `${A}/workers/scripts/(?<name>[\\w-]+)`;
  const routes: { method: string; pattern: RegExp; handler: Handler }[] = [];
  const on = (method: string, pattern: string, handler: Handler) =>
    routes.push({ method, pattern: new RegExp(`${pattern}$`), handler });
  const of = (p: Params) => script(account, p.name!);

  on("GET", `${A}/workers/services/(?<name>[\\w-]+)`, (p) => {
    of(p);
    return {
      id: p.name,
      default_environment: {
        environment: "production",
        script: {
          id: p.name,
          tag: `tag-${p.name}`,
          tags: [],
          last_deployed_from: "wrangler",
          ...(of(p).migrationTag ? { migration_tag: of(p).migrationTag } : {}),
        },
      },
    };
  });
  on("GET", `${A}/workers/subdomain`, () => ({ subdomain: "rehearsal" }));
  on("GET", `${A}/workers/workers/(?<name>[\\w-]+)`, (p) => ({
    id: `tag-${of(p).name}`,
    name: of(p).name,
    subdomain: { enabled: of(p).workersDev, previews_enabled: false },
  }));
  on("GET", `${W}/subdomain`, (p) => ({ enabled: of(p).workersDev, previews_enabled: false }));
  on("POST", `${W}/subdomain`, async (p, body) => {
    of(p).workersDev = Boolean(((await body()) as { enabled?: boolean }).enabled);
    return { enabled: of(p).workersDev, previews_enabled: false };
  });
  on("GET", `${W}/settings`, (p) => {
    const s = of(p);
    // The serving version's bindings: wrangler reads them to tell a binding it must provision (an R2 bucket) from
    // one the Worker has already.
    const serving = s.versions.find((v) => v.id === s.deployments[0]?.versions[0]?.version_id) ?? s.versions.at(-1);
    return { logpush: false, tail_consumers: [], observability: { enabled: true }, bindings: serving?.bindings ?? [] };
  });
  on("PATCH", `${W}/script-settings`, async (p, body) => {
    of(p);
    return await body();
  });

  // A plain deploy: upload and deploy at once (creates the Worker).
  on("PUT", W, async (p, body) => {
    const s = account.scripts.get(p.name!) ?? newScript(account, p.name!);
    const metadata = (await body()) as Parameters<typeof uploadVersion>[1] & { migrations?: { new_tag?: string } };
    let v: Version;
    try {
      v = uploadVersion(s, metadata, ids, now());
    } catch (err) {
      if (s.versions.length === 0) account.scripts.delete(s.name);
      throw err;
    }
    // Durable Object migrations are applied by a plain deploy only (edge/tenants/quota-object.ts's class).
    if (metadata.migrations?.new_tag) s.migrationTag = metadata.migrations.new_tag;
    deploy(s, [{ version_id: v.id, percentage: 100 }], v.annotations, true, ids, now());
    return { id: s.name, etag: `etag-${v.id}`, deployment_id: v.id, startup_time_ms: 0, has_modules: true };
  });
  on("POST", `${W}/versions`, async (p, body) => shown(uploadVersion(of(p), (await body()) as never, ids, now())));
  on("GET", `${W}/versions`, (p) => ({ items: [...of(p).versions].reverse().map(shown) }));
  on("GET", `${W}/versions/(?<version>[\\w-]+)`, (p) => {
    const v = of(p).versions.find((x) => x.id === p.version);
    if (!v) throw new ApiRefusal(404, 10000, `version ${p.version} not found`);
    return shown(v);
  });
  on("GET", `${W}/deployments`, (p) => ({ deployments: of(p).deployments }));
  on("POST", `${W}/deployments`, async (p, body, query) => {
    const b = (await body()) as {
      versions: { version_id: string; percentage: number }[];
      annotations?: Record<string, string>;
    };
    return deploy(of(p), b.versions, b.annotations ?? {}, query.get("force") === "true", ids, now());
  });

  on("GET", `${W}/secrets`, (p) =>
    (latestVersion(of(p))?.bindings ?? [])
      .filter((b) => b.type === "secret_text")
      .map((b) => ({ name: b.name, type: b.type })),
  );
  on("PUT", `${W}/secrets`, async (p, body) => {
    const b = (await body()) as Binding;
    putSecrets(of(p), { [b.name]: b.text ?? "" }, ids, now(), true);
    return { name: b.name, type: "secret_text" };
  });
  on("PATCH", `${W}/secrets-bulk`, async (p, body) => {
    const b = (await body()) as { secrets: Record<string, Binding | null> };
    const secrets = Object.fromEntries(Object.entries(b.secrets).map(([k, v]) => [k, v ? (v.text ?? "") : null]));
    putSecrets(of(p), secrets, ids, now(), true);
    return {};
  });
  on("PATCH", `${A}/workers/workers/(?<name>[\\w-]+)/versions/latest`, async (p, body) => {
    const b = (await body()) as { env: Record<string, { text: string } | null> };
    const secrets = Object.fromEntries(Object.entries(b.env).map(([k, v]) => [k, v ? v.text : null]));
    return shown(putSecrets(of(p), secrets, ids, now(), false));
  });

  on("PUT", `${W}/schedules`, async (p, body) => {
    of(p).schedules = (await body()) as { cron: string }[];
    return { schedules: of(p).schedules };
  });
  on("GET", `${W}/schedules`, (p) => ({ schedules: of(p).schedules }));

  on("POST", `${W}/domains/changeset`, async (p, body) =>
    domainChangeset(account, of(p).name, (await body()) as never),
  );
  on("PUT", `${W}/domains/records`, async (p, body) => putDomains(account, of(p).name, (await body()) as never, ids));
  on("GET", `${A}/workers/domains/records/(?<id>\\w+)`, (p) => {
    const d = account.customDomains.find((x) => x.id === p.id);
    if (!d) throw new ApiRefusal(404, 100114, "custom domain not found");
    return d;
  });
  on("GET", `${A}/workers/domains`, (_p, _b, query) =>
    account.customDomains.filter((d) => !query.get("hostname") || d.hostname === query.get("hostname")),
  );

  on("POST", `${A}/storage/kv/namespaces`, async (_p, body) => {
    const { title } = (await body()) as { title: string };
    if ([...account.kvNamespaces.values()].some((n) => n.title === title)) {
      throw new ApiRefusal(400, 10014, "a namespace with this account ID and title already exists");
    }
    const ns = { id: ids.hex(), title };
    account.kvNamespaces.set(ns.id, ns);
    return ns;
  });
  on("GET", `${A}/storage/kv/namespaces`, () => [...account.kvNamespaces.values()]);
  on("GET", `${A}/storage/kv/namespaces/(?<id>[^/]+)`, (p) => {
    const ns = account.kvNamespaces.get(p.id!);
    if (!ns) throw new ApiRefusal(404, 10013, "namespace not found");
    return ns;
  });

  on("POST", `${A}/r2/buckets`, async (_p, body) => {
    const { name } = (await body()) as { name: string };
    if (account.r2Buckets.has(name)) throw new ApiRefusal(409, 10004, "The bucket you tried to create already exists");
    const bucket = { name, creation_date: now(), location: "ENAM" };
    account.r2Buckets.set(name, bucket);
    return bucket;
  });
  on("GET", `${A}/r2/buckets`, () => ({ buckets: [...account.r2Buckets.values()] }));
  on("GET", `${A}/r2/buckets/(?<name>[^/]+)`, (p) => {
    const bucket = account.r2Buckets.get(p.name!);
    if (!bucket) throw new ApiRefusal(404, 10006, "The specified bucket does not exist");
    return bucket;
  });

  on("GET", "^/zones", (_p, _b, query) =>
    account.zones
      .filter((z) => !query.get("name") || z.name === query.get("name"))
      .map((z) => ({ id: z.id, name: z.name, status: "active", account: { id: account.id } })),
  );
  const RH = "^/zones/(?<zone>\\w+)/addressing/regional_hostnames";
  on("GET", `${RH}/(?<hostname>[^/]+)`, (p) => {
    const found = account.regionalHostnames.find((r) => r.zone_id === p.zone && r.hostname === p.hostname);
    if (!found) throw new ApiRefusal(404, 1002, "regional hostname not found");
    return found;
  });
  on("POST", RH, async (p, body) => {
    const zone = account.zones.find((z) => z.id === p.zone);
    if (!zone) throw new ApiRefusal(404, 1001, "zone not found");
    const b = (await body()) as { hostname: string; region_key: string };
    zoneOf(account, { hostname: b.hostname, zone_id: zone.id });
    if (!zone.regionalServices) {
      throw new ApiRefusal(403, 1003, "Regional Services is not enabled for this zone (Data Localization Suite)");
    }
    const entry = { hostname: b.hostname, region_key: b.region_key, zone_id: zone.id, created_on: now() };
    account.regionalHostnames = account.regionalHostnames.filter((r) => r.hostname !== b.hostname);
    account.regionalHostnames.push(entry);
    return entry;
  });
  return routes;
}

/** The metadata part of a Worker upload (multipart/form-data): its bindings, as wrangler sent them. */
export function uploadedBindings(call: ApiCall): { name: string; type: string; text?: string }[] {
  const metadata = call.body.match(/name="metadata"\r\n(?:[^\r\n]+\r\n)*\r\n(\{.*?\})\r\n--/s)?.[1];
  if (!metadata) throw new Error(`no metadata part in ${call.method} ${call.url}`);
  return (JSON.parse(metadata) as { bindings: { name: string; type: string; text?: string }[] }).bindings;
}
