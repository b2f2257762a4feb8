import { Client } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { heldoutOf } from "../support/heldout.ts";
import { confidentRows, unsureRows } from "./support.ts";

/**
 * The Worker's fast path for POST /v1/classify (edge/fast-path/) against the Hono app, which serves the same
 * route: two Workers started alike get the same requests in the same order, one as the fast path takes them,
 * the other with a query string (which the fast path declines, so the app answers). Every answer must be
 * the same: status, headers and body, and so must the counts in /status afterwards.
 */
const digits = confidentRows[0]!.input;
const unsure = unsureRows[0]!.input;
const cancer = heldoutOf("breast-cancer").rows[0]!.input;
const json = { "content-type": "application/json" };

interface Send {
  name: string;
  body: string | Uint8Array | object;
  headers?: Record<string, string>;
  /** On a connection of its own (workerd closes one whose over-limit body it did not read). */
  ownConnection?: boolean;
}

const CALLS: Send[] = [
  { name: "a confident row, auto (the edge answers)", body: { model: "digits", inputs: digits } },
  { name: "the same row again (a cache hit)", body: { model: "digits", inputs: [digits] } },
  { name: "an unsure row, no region (degraded)", body: { model: "digits", inputs: [unsure] } },
  {
    name: "cascade edge, with an id",
    body: { model: "digits", inputs: [digits], id: "r-1", parameters: { cascade: "edge" } },
  },
  {
    name: "cascade regional (degraded)",
    body: { model: "digits", inputs: [digits], parameters: { cascade: "regional" } },
  },
  { name: "a batch of three", body: { model: "digits", inputs: [digits, unsure, digits] } },
  { name: "a pinned version", body: { model: "digits", version: "1", inputs: [digits] } },
  { name: "the tree model", body: { model: "breast-cancer", inputs: [cancer] } },
  {
    name: "from an allowed origin",
    body: { model: "digits", inputs: [digits] },
    headers: { origin: "https://app.example" },
  },
  {
    name: "from another origin",
    body: { model: "digits", inputs: [digits] },
    headers: { origin: "https://evil.example" },
  },
  { name: "invalid JSON", body: "{" },
  { name: "an empty body", body: "" },
  {
    name: "invalid UTF-8",
    body: Buffer.concat([Buffer.from('{"model":"digits","id":"'), Buffer.from([0xff, 0x22, 0x7d])]),
  },
  { name: "a text body", body: "{}", headers: { "content-type": "text/plain" } },
  { name: "an unknown field", body: { model: "digits", inputs: [digits], x: 1 } },
  { name: "an unknown model", body: { model: "cats", inputs: [digits] } },
  { name: "an unknown version", body: { model: "digits", version: "7", inputs: [digits] } },
  { name: "a short row", body: { model: "digits", inputs: [digits.slice(1)] } },
  { name: "a value past float32", body: `{"model":"digits","inputs":[1e39${",0".repeat(63)}]}` },
  { name: "65 rows", body: { model: "digits", inputs: Array.from({ length: 65 }, () => digits) } },
  { name: "an unknown cascade mode", body: { model: "digits", inputs: [digits], parameters: { cascade: "often" } } },
  {
    name: "a body over 256 KiB",
    body: { model: "digits", inputs: [digits], id: "x".repeat(300_000) },
    ownConnection: true,
  },
];

const KEYS = [
  { key: "acme-key", tenant: "acme", models: ["digits"], rateLimit: { requests: 3, periodS: 60 } },
  { key: "ops-key", tenant: "ops" },
];
const KEYED_CALLS: Send[] = [
  { name: "no key", body: { model: "digits", inputs: [digits] } },
  { name: "an unknown key", body: { model: "digits", inputs: [digits] }, headers: { "x-api-key": "nope" } },
  { name: "a bearer key", body: { model: "digits", inputs: [digits] }, headers: { authorization: "Bearer ops-key" } },
  {
    name: "a model outside the key's",
    body: { model: "breast-cancer", inputs: [cancer] },
    headers: { "x-api-key": "acme-key" },
  },
  ...Array.from({ length: 3 }, (_, i) => ({
    name: `the key's call ${i + 2} of its limit of 3`,
    body: { model: "digits", inputs: [digits] },
    headers: { "x-api-key": "acme-key" },
  })),
];

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Timings and each request's own trace differ between two runs of the same request; everything else must not. */
function comparable(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  if (out["server-timing"]) {
    out["server-timing"] = out["server-timing"]
      .replace(/dur=[\d.]+/g, "dur=…")
      .replace(/traceparent;desc="00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}"/, 'traceparent;desc="…"');
  }
  if (out["retry-after"]) out["retry-after"] = "…";
  return out;
}

async function send(worker: EdgeWorker, path: string, call: Send): Promise<Answer> {
  const headers = { ...json, ...call.headers };
  const body = typeof call.body === "string" || call.body instanceof Uint8Array ? call.body : JSON.stringify(call.body);
  if (call.ownConnection) {
    const client = new Client(worker.url);
    try {
      const res = await client.request({ method: "POST", path, headers, body });
      const flat = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
      delete flat.date;
      delete flat.connection;
      delete flat["content-length"];
      return { status: res.statusCode, headers: comparable(flat), body: await res.body.text() };
    } finally {
      await client.destroy();
    }
  }
  const response = await worker.dispatchFetch(`${worker.url}${path}`, { method: "POST", headers, body });
  return {
    status: response.status,
    headers: comparable(Object.fromEntries(response.headers as unknown as Iterable<[string, string]>)),
    body: await response.text(),
  };
}

async function statusOf(worker: EdgeWorker, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await worker.dispatchFetch(`${worker.url}/status`, { headers });
  const { since: _since, ...rest } = (await response.json()) as Record<string, unknown>;
  return rest;
}

interface Config {
  config: string;
  vars: Record<string, string>;
  calls: Send[];
  /** Headers of the /status request (its key). */
  statusHeaders: Record<string, string>;
}

describe.each<Config>([
  { config: "open, no keys", vars: {}, calls: CALLS, statusHeaders: {} },
  {
    config: "API keys and allowed origins",
    vars: { API_KEYS: JSON.stringify(KEYS), CORS_ORIGINS: "https://app.example" },
    calls: [...KEYED_CALLS, ...CALLS.map((c) => ({ ...c, headers: { "x-api-key": "ops-key", ...c.headers } }))],
    statusHeaders: { "x-api-key": "ops-key" },
  },
])("the classify fast path against the Hono app ($config)", ({ vars, calls, statusHeaders }) => {
  let fast: EdgeWorker;
  let app: EdgeWorker;
  const answers: { name: string; fast: Answer; app: Answer }[] = [];

  beforeAll(async () => {
    const options = { vars: { REGIONS: "[]", ...vars }, rateLimit: false as const };
    [fast, app] = await Promise.all([startEdgeWorker(options), startEdgeWorker(options)]);
    for (const call of calls) {
      answers.push({
        name: call.name,
        fast: await send(fast, "/v1/classify", call),
        app: await send(app, "/v1/classify?path=app", call),
      });
    }
  });
  afterAll(async () => {
    await Promise.all([fast?.dispose(), app?.dispose()]);
  });

  it.each(calls.map((c) => c.name))("%s: the same answer", (name) => {
    const answer = answers.find((a) => a.name === name)!;
    expect(answer.fast).toEqual(answer.app);
  });

  it("went through every outcome (answers of each tier and refusals of each kind)", () => {
    const outcomes = new Set(
      answers.map((a) => (a.fast.status === 200 ? a.fast.headers["x-served-by"] : String(a.fast.status))),
    );
    for (const expected of ["edge", "cache", "degraded", "400", "404", "413"]) expect(outcomes).toContain(expected);
    if (calls === CALLS) expect(outcomes).toContain("415");
    else for (const expected of ["401", "403", "429"]) expect(outcomes).toContain(expected);
  });

  it("counted every request alike", async () => {
    expect(await statusOf(fast, statusHeaders)).toEqual(await statusOf(app, statusHeaders));
  });
});
