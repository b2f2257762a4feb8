import { execFile } from "node:child_process";
import { Client } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { classify, confidentRows, getJson } from "./support.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const NO_REGIONS = { REGIONS: "[]" };
const row = confidentRows[0]!.input;
const rows = (n: number) => Array.from({ length: n }, () => row);
const tensor = (over: Record<string, unknown> = {}) => ({
  inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: row, ...over }],
});

interface Case {
  name: string;
  method?: string;
  path?: string;
  contentType?: string;
  body?: string | object;
  status: number;
  code: string;
  error?: RegExp;
  /**
   * Sent on a connection of its own: workerd answers a body over the limit without reading it and closes the
   * connection, so a request that a pool would send next on that connection could meet EPIPE.
   */
  ownConnection?: boolean;
}

const cases: Case[] = [
  { name: "invalid JSON", body: "{", status: 400, code: "bad_request", error: /invalid JSON/ },
  { name: "empty body", body: "", status: 400, code: "bad_request", error: /empty/ },
  { name: "JSON that is not an object", body: "[1]", status: 400, code: "bad_request" },
  { name: "text content type", contentType: "text/plain", body: "{}", status: 415, code: "unsupported_media_type" },
  { name: "missing model", body: { inputs: [row] }, status: 400, code: "bad_request", error: /"model" is required/ },
  { name: "unknown field", body: { model: "digits", inputs: [row], x: 1 }, status: 400, code: "bad_request" },
  { name: "unknown model", body: { model: "cats", inputs: [row] }, status: 404, code: "not_found", error: /cats/ },
  { name: "the edge model's own name", body: { model: "digits-edge", inputs: [row] }, status: 404, code: "not_found" },
  { name: "unknown version", body: { model: "digits", version: "2", inputs: [row] }, status: 404, code: "not_found" },
  {
    name: "malformed version",
    body: { model: "digits", version: "v1", inputs: [row] },
    status: 400,
    code: "bad_request",
  },
  { name: "short row", body: { model: "digits", inputs: [row.slice(1)] }, status: 400, code: "bad_request" },
  {
    name: "string value",
    body: { model: "digits", inputs: [["a", ...row.slice(1)]] },
    status: 400,
    code: "bad_request",
  },
  {
    name: "value past float32",
    body: `{"model":"digits","inputs":[[1e39${",0".repeat(63)}]]}`,
    status: 400,
    code: "bad_request",
  },
  {
    name: "infinite value",
    body: `{"model":"digits","inputs":[[1e999${",0".repeat(63)}]]}`,
    status: 400,
    code: "bad_request",
  },
  { name: "empty inputs", body: { model: "digits", inputs: [] }, status: 400, code: "bad_request" },
  { name: "65 rows", body: { model: "digits", inputs: rows(65) }, status: 413, code: "payload_too_large" },
  {
    name: "body over 256 KiB",
    body: { model: "digits", inputs: [row], id: "x".repeat(300_000) },
    status: 413,
    code: "payload_too_large",
    ownConnection: true,
  },
  {
    name: "unknown cascade mode",
    body: { model: "digits", inputs: [row], parameters: { cascade: "sometimes" } },
    status: 400,
    code: "bad_request",
    error: /"parameters.cascade" must be one of/,
  },
  { name: "GET classify", method: "GET", status: 405, code: "method_not_allowed" },
  { name: "PUT classify", method: "PUT", body: {}, status: 405, code: "method_not_allowed" },
  { name: "unknown route", path: "/v1/predict", body: {}, status: 404, code: "not_found" },
  {
    name: "v2 wrong datatype",
    path: "/v2/models/digits/infer",
    body: tensor({ datatype: "INT32" }),
    status: 400,
    code: "bad_request",
  },
  {
    name: "v2 unknown datatype",
    path: "/v2/models/digits/infer",
    body: tensor({ datatype: "F32" }),
    status: 400,
    code: "bad_request",
  },
  {
    name: "v2 wrong shape",
    path: "/v2/models/digits/infer",
    body: tensor({ shape: [1, 32] }),
    status: 400,
    code: "bad_request",
  },
  {
    name: "v2 data not matching shape",
    path: "/v2/models/digits/infer",
    body: tensor({ shape: [2, 64] }),
    status: 400,
    code: "bad_request",
  },
  {
    name: "v2 unknown input",
    path: "/v2/models/digits/infer",
    body: tensor({ name: "x" }),
    status: 400,
    code: "bad_request",
  },
  { name: "v2 unknown model", path: "/v2/models/cats/infer", body: tensor(), status: 404, code: "not_found" },
  {
    name: "v2 unknown version",
    path: "/v2/models/digits/versions/9/infer",
    body: tensor(),
    status: 404,
    code: "not_found",
  },
  {
    name: "v2 unknown cascade",
    path: "/v2/models/digits/infer",
    body: { ...tensor(), parameters: { cascade: 1 } },
    status: 400,
    code: "bad_request",
  },
  { name: "v2 GET infer", method: "GET", path: "/v2/models/digits/infer", status: 405, code: "method_not_allowed" },
  {
    name: "v2 POST metadata",
    method: "POST",
    path: "/v2/models/digits",
    body: {},
    status: 405,
    code: "method_not_allowed",
  },
  { name: "v2 unknown model metadata", method: "GET", path: "/v2/models/cats", status: 404, code: "not_found" },
];

describe("bad requests in workerd", () => {
  let worker: EdgeWorker;
  beforeAll(async () => {
    worker = await startEdgeWorker({ vars: NO_REGIONS });
  });
  afterAll(() => worker?.dispose());

  async function send(c: Case): Promise<{ status: number; allow: string | null; body: unknown }> {
    const method = c.method ?? "POST";
    const path = c.path ?? "/v1/classify";
    const headers = { "content-type": c.contentType ?? "application/json" };
    const body = method === "GET" ? undefined : typeof c.body === "string" ? c.body : JSON.stringify(c.body ?? {});
    if (c.ownConnection) {
      const client = new Client(worker.url);
      try {
        const res = await client.request({ method: method as "POST", path, headers, body });
        const allow = res.headers.allow;
        return { status: res.statusCode, allow: typeof allow === "string" ? allow : null, body: await res.body.json() };
      } finally {
        await client.destroy();
      }
    }
    const response = await worker.dispatchFetch(`${worker.url}${path}`, { method, headers, body });
    return { status: response.status, allow: response.headers.get("allow"), body: await response.json() };
  }

  it.each(cases)("$name -> $status $code", async (c) => {
    const response = await send(c);
    expect(response.status).toBe(c.status);
    const body = response.body as { error: string; code: string };
    expect(body.code).toBe(c.code);
    expect(typeof body.error).toBe("string");
    if (c.error) expect(body.error).toMatch(c.error);
    if (c.status === 405) expect(response.allow).toMatch(/^(GET, HEAD|POST)$/);
  });
});

describe("a bad variable in workerd", () => {
  let worker: EdgeWorker;
  const logs: { level: string; message: string }[] = [];
  const message = `the Worker's configuration is invalid: SLO_BUDGET_MS: must be a number >= 1, got "ten"`;
  beforeAll(async () => {
    worker = await startEdgeWorker({
      vars: { ...NO_REGIONS, SLO_BUDGET_MS: "ten" },
      onLog: (level, line) => logs.push({ level, message: line }),
    });
  });
  afterAll(() => worker?.dispose());

  it("is logged once, as the isolate starts, naming the variable; every request answers 500 with that message", async () => {
    const fast = () => classify(worker, confidentRows.slice(0, 1));
    const get = async (path: string) => {
      const response = await worker.dispatchFetch(`${worker.url}${path}`);
      return { status: response.status, body: await response.json() };
    };
    // The fast path's classify, the Hono app's routes, and again.
    for (const answer of [await fast(), await get("/v2"), await get("/status"), await fast()]) {
      expect(answer).toMatchObject({ status: 500, body: { error: message, code: "bad_configuration" } });
    }
    expect(logs.filter((l) => l.message.includes("SLO_BUDGET_MS"))).toEqual([{ level: "error", message }]);
  });
});

describe("CORS in workerd", () => {
  let open: EdgeWorker;
  let restricted: EdgeWorker;
  beforeAll(async () => {
    open = await startEdgeWorker({ vars: NO_REGIONS });
    restricted = await startEdgeWorker({ vars: { ...NO_REGIONS, CORS_ORIGINS: "https://app.example" } });
  });
  afterAll(async () => {
    await open?.dispose();
    await restricted?.dispose();
  });

  const preflight = (worker: EdgeWorker, origin: string) =>
    worker.dispatchFetch(`${worker.url}/v1/classify`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, authorization",
      },
    });

  it("answers a preflight", async () => {
    const response = await preflight(open, "https://anywhere.example");
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(response.headers.get("access-control-max-age")).toBe("600");
  });

  it("lets browser code read the answer headers and Server-Timing", async () => {
    const answer = await classify(open, [confidentRows[0]!], undefined, { headers: { origin: "https://a.example" } });
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = answer.headers.get("access-control-expose-headers")!.split(",");
    expect(exposed).toEqual(expect.arrayContaining(["server-timing", "x-served-by", "x-model-version", "retry-after"]));
    expect(answer.headers.get("timing-allow-origin")).toBe("*");
  });

  it("allows only configured origins when CORS_ORIGINS is set", async () => {
    const allowed = await preflight(restricted, "https://app.example");
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const refused = await preflight(restricted, "https://evil.example");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("API keys in workerd", () => {
  let worker: EdgeWorker;
  beforeAll(async () => {
    worker = await startEdgeWorker({ vars: { ...NO_REGIONS, API_KEYS: "key-one, key-two" } });
  });
  afterAll(() => worker?.dispose());

  it.each([
    ["no key", {}, 401],
    ["a wrong key", { authorization: "Bearer nope" }, 401],
    ["a wrong scheme", { authorization: "Basic key-one" }, 401],
    ["a bearer key", { authorization: "Bearer key-one" }, 200],
    ["an x-api-key", { "x-api-key": "key-two" }, 200],
  ])("with %s (%j): %d", async (_, headers, status) => {
    const answer = await classify(worker, [confidentRows[0]!], undefined, { headers });
    expect(answer.status).toBe(status);
    if (status === 401) {
      expect(answer.body).toMatchObject({ code: "unauthorized" });
      expect(answer.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  it("guards model routes and status, not health, server metadata or preflights", async () => {
    expect((await getJson(worker, "/v2/models/digits")).status).toBe(401);
    expect((await getJson(worker, "/status/regions")).status).toBe(401);
    expect((await getJson(worker, "/status/sessions")).status).toBe(401);
    expect((await getJson(worker, "/v2/models/digits", { "x-api-key": "key-one" })).status).toBe(200);
    expect((await getJson(worker, "/v2/health/ready")).status).toBe(200);
    expect((await getJson(worker, "/v2")).status).toBe(200);
    const preflight = await worker.dispatchFetch(`${worker.url}/v1/classify`, {
      method: "OPTIONS",
      headers: { origin: "https://a.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
  });

  it("the probe without a key: exit code 3 and the cause, pass --api-key; with one: no errors", async () => {
    const probe = (extra: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const args = ["tools/probe.ts", "--url", worker.url, "--duration", "0.5", "--rate", "20", "--json"];
        const flags = ["--warmup", "0", "--floor-duration", "0", "--report", "/dev/null", ...extra];
        execFile(process.execPath, [...args, ...flags], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
        );
      });
    const [without, withKey] = await Promise.all([probe([]), probe(["--api-key", "key-one"])]);
    expect(without.code, without.stderr).toBe(3);
    expect(JSON.parse(without.stdout)).toMatchObject({ errors: 10, verdict: { exitCode: 3 } });
    expect(without.stderr).toContain("probe: 100.00% of requests erred (10 of 10), more than --max-error-share 1.00%");
    expect(without.stderr).toContain("10 requests answered 401: the edge requires an API key; pass --api-key KEY");
    // With the key nothing errs; whether p95 held on this machine decides between 0 and 1, and the JSON says which.
    const summary = JSON.parse(withKey.stdout);
    expect(summary.errors).toBe(0);
    expect(withKey.code).toBe(summary.target.holds ? 0 : 1);
  });

  it("keeps CORS headers on a 401, so the browser can read the error", async () => {
    const answer = await classify(worker, [confidentRows[0]!], undefined, { headers: { origin: "https://a.example" } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
  });
});

/**
 * The binding counts in fixed windows of its period, aligned to the wall clock (Miniflare's rate-limit object:
 * `floor(Date.now() / period)`). A burst that crossed a window's edge proves nothing, so it runs again, past
 * that edge and with the next attempt's fresh identities (keys, addresses): no waiting for a window to start
 * unless a burst met its edge, and no bound on how long a burst may take on a loaded machine.
 */
async function inOneWindow<T>(periodS: number, burst: (attempt: number) => Promise<T>): Promise<T> {
  // workerd reads the same clock; a second either side covers when it read it relative to this process.
  const SLACK_MS = 1000;
  const periodMs = periodS * 1000;
  const window = (ms: number) => Math.floor(ms / periodMs);
  for (let attempt = 0; attempt < 3; attempt++) {
    const from = window(Date.now() - SLACK_MS);
    const result = await burst(attempt);
    const to = window(Date.now() + SLACK_MS);
    if (to === from) return result;
    // Start the next attempt clear of the edge this one met.
    const clearOfEdge = to * periodMs + SLACK_MS - Date.now();
    if (clearOfEdge > 0) await new Promise((resolve) => setTimeout(resolve, clearOfEdge));
  }
  throw new Error(`three bursts in a row met the edge of a ${periodS} s window`);
}

describe("rate limit in workerd", () => {
  let keyed: EdgeWorker;
  let open: EdgeWorker;
  const PERIOD_S = 60;
  /** Two keys per attempt of inOneWindow: the limited one and the one that must be unaffected. */
  const keys = (attempt: number) => [`a${attempt}`, `b${attempt}`] as const;
  beforeAll(async () => {
    const rateLimit = { limit: 3, period: PERIOD_S } as const;
    const apiKeys = [0, 1, 2].flatMap(keys).join(",");
    keyed = await startEdgeWorker({ vars: { ...NO_REGIONS, API_KEYS: apiKeys }, rateLimit });
    open = await startEdgeWorker({ vars: NO_REGIONS, rateLimit });
  });
  afterAll(async () => {
    await keyed?.dispose();
    await open?.dispose();
  });

  it("answers 429 with Retry-After past the limit of one key; other keys are unaffected", async () => {
    const send = (key: string) =>
      classify(keyed, [confidentRows[0]!], undefined, { headers: { "x-api-key": key, origin: "https://a.example" } });
    const { statuses, limited, other } = await inOneWindow(PERIOD_S, async (attempt) => {
      const [a, b] = keys(attempt);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(a)).status);
      return { statuses, limited: await send(a), other: await send(b) };
    });
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.body).toMatchObject({ code: "rate_limited", error: "rate limit exceeded for this API key" });
    expect(limited.headers.get("access-control-allow-origin")).toBe("*");
    expect(other.status).toBe(200);
  });

  it("limits by client address when there are no keys", async () => {
    const send = (ip: string) =>
      classify(open, [confidentRows[0]!], undefined, { headers: { "cf-connecting-ip": ip } });
    const { statuses, other } = await inOneWindow(PERIOD_S, async (attempt) => {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(`203.0.113.${2 * attempt + 1}`)).status);
      return { statuses, other: await send(`203.0.113.${2 * attempt + 2}`) };
    });
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(other.status).toBe(200);
  });
});
