import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureHeaders } from "../../protocol/signing.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { heldoutOf } from "../support/heldout.ts";
import { until } from "../support/regional-process.ts";
import {
  classifyRows,
  metric,
  get as poolGet,
  post as poolPost,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";
import {
  confidentRows,
  expectScores,
  getJson,
  NO_HEDGES,
  post,
  regionsVar,
  type StatusBody,
  US_EAST,
  unsureRows,
  warmEdge,
} from "./support.ts";

const NO_REGIONS = { REGIONS: "[]" };
const KEYS = [
  { key: "acme-key", tenant: "acme", models: ["digits"], rateLimit: { requests: 5, periodS: 60 } },
  { key: "acme-rotated", tenant: "acme", models: ["digits"] },
  { key: "globex-key", tenant: "globex", models: ["breast-cancer"] },
  { key: "ops-key", tenant: "ops" },
];
const cancerRow = heldoutOf("breast-cancer").rows[0]!.input;
const digitsRow = confidentRows[0]!.input;

describe("scoped API keys (tenants) in workerd", () => {
  let worker: EdgeWorker;
  const call = (key: string, model: string, inputs: number[]) =>
    post(worker, "/v1/classify", { model, inputs, parameters: { cascade: "edge" } }, { headers: { "x-api-key": key } });

  beforeAll(async () => {
    worker = await startEdgeWorker({ vars: { ...NO_REGIONS, API_KEYS: JSON.stringify(KEYS) }, rateLimit: false });
  });
  afterAll(() => worker?.dispose());

  it("lets a key call the models it lists", async () => {
    expect((await call("acme-key", "digits", digitsRow)).status).toBe(200);
    expect((await call("globex-key", "breast-cancer", cancerRow)).status).toBe(200);
    expect((await call("ops-key", "breast-cancer", cancerRow)).status).toBe(200);
    expect((await call("ops-key", "digits", digitsRow)).status).toBe(200);
  });

  it("answers another model with a 403 that says which ones the key may call", async () => {
    const refused = await call("globex-key", "digits", digitsRow);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: "forbidden",
      error: 'this API key may not call model "digits"; it may call "breast-cancer"',
    });
    const v2 = await post(
      worker,
      "/v2/models/breast-cancer/infer",
      { inputs: [{ name: "features", shape: [1, 30], datatype: "FP32", data: cancerRow }] },
      { headers: { "x-api-key": "acme-key" } },
    );
    expect(v2.status).toBe(403);
    expect((await getJson(worker, "/v2/models/breast-cancer", { "x-api-key": "acme-key" })).status).toBe(403);
  });

  it("names only the key's models in a 404, and lists only them in the index", async () => {
    const unknown = await call("globex-key", "nope", cancerRow);
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: 'unknown model "nope"; this endpoint serves "breast-cancer"' },
    });
    const all = await call("ops-key", "nope", cancerRow);
    expect(all.body).toMatchObject({ error: 'unknown model "nope"; this endpoint serves "breast-cancer", "digits"' });
    const index = await worker.dispatchFetch(`${worker.url}/v2/repository/index`, {
      method: "POST",
      headers: { "x-api-key": "globex-key" },
    });
    expect(((await index.json()) as { name: string }[]).map((m) => m.name)).toEqual(["breast-cancer"]);
  });

  it("holds a key to its own rate limit; its tenant's other key and other tenants are unaffected", async () => {
    // acme-key has made 1 call above, plus a refused one (403s and 404s are counted against its window too).
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call("acme-key", "digits", digitsRow)).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const limited = await call("acme-key", "digits", digitsRow);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      code: "rate_limited",
      error: 'rate limit of tenant "acme"\'s API key exceeded',
    });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await call("acme-rotated", "digits", digitsRow)).status).toBe(200);
    expect((await call("ops-key", "digits", digitsRow)).status).toBe(200);
  });

  it("counts per model and per tenant at /status; a scoped key sees its own only", async () => {
    type Status = {
      tenant: string;
      models: Record<string, { requests: { answered: number; edge: number; refused: number } }>;
      tenants: Record<string, { answered: number; models: Record<string, number>; refused: Record<string, number> }>;
    };
    const ops = (await getJson<Status>(worker, "/status", { "x-api-key": "ops-key" })).body;
    expect(ops.tenant).toBe("ops");
    expect(Object.keys(ops.models).sort()).toEqual(["breast-cancer", "digits"]);
    expect(Object.keys(ops.tenants).sort()).toEqual(["acme", "globex", "ops"]);
    expect(ops.tenants.globex).toEqual({ answered: 1, models: { "breast-cancer": 1 }, refused: { 403: 1, 404: 1 } });
    expect(ops.tenants.acme!.refused[403]).toBe(2);
    expect(ops.tenants.acme!.refused[429]).toBeGreaterThan(0);
    expect(ops.tenants.acme!.models.digits).toBe(ops.tenants.acme!.answered);
    const answered = Object.values(ops.tenants).reduce((n, t) => n + (t.models.digits ?? 0), 0);
    expect(ops.models.digits!.requests.answered).toBe(answered);
    expect(ops.models.digits!.requests.edge).toBe(answered);
    expect(ops.models.digits!.requests.refused).toBeGreaterThan(0);

    const globex = (await getJson<Status>(worker, "/status", { "x-api-key": "globex-key" })).body;
    expect(Object.keys(globex.models)).toEqual(["breast-cancer"]);
    expect(Object.keys(globex.tenants)).toEqual(["globex"]);
    expect((await getJson(worker, "/status")).status).toBe(401);
  });
});

describe("API_KEYS that name a model the Worker does not serve", () => {
  it("make the Worker refuse every request rather than serve with a mistyped scope", async () => {
    const worker = await startEdgeWorker({
      vars: { ...NO_REGIONS, API_KEYS: JSON.stringify([{ key: "k", models: ["digit"] }]) },
    });
    try {
      const answer = await post(worker, "/v1/classify", { model: "digits", inputs: digitsRow });
      expect(answer.status).toBe(500);
    } finally {
      await worker.dispose();
    }
  });
});

describe("the tenant on the signed forward, and a pool that sheds it", () => {
  const SECRET = "edge-to-region-secret";
  let pool: TestServer;
  let worker: EdgeWorker;
  const keys = [
    { key: "acme-key", tenant: "acme" },
    { key: "globex-key", tenant: "globex" },
  ];

  beforeAll(async () => {
    // As test/regional/admission.test.ts: 200 ms per request, one row per run, best-effort may wait 1% of a deadline.
    const flags = ["--delay-ms", "200", "--max-batch", "1", "--best-effort-wait-percent", "1"];
    const tenants = ["--tenants", "acme=guaranteed:1000,globex=best-effort"];
    pool = await startTestServer(testOptions([...flags, ...tenants], { REGIONAL_SHARED_SECRET: SECRET }));
    worker = await warmEdge(
      await startEdgeWorker({
        vars: {
          REGIONS: regionsVar([{ name: "us", url: pool.url, at: US_EAST }]),
          API_KEYS: JSON.stringify(keys),
          REGIONAL_SHARED_SECRET: SECRET,
          ...NO_HEDGES,
        },
        rateLimit: false,
      }),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.shutdown();
  });

  it("answers a shed tenant's unsure row with its own model (degraded, tenant-shed), never a 5xx; the reserved tenant gets the region", async () => {
    const signedCall = async (from: number, tenant?: string) => {
      const text = JSON.stringify(classifyRows(from));
      const call = { method: "POST", path: "/v1/classify", body: text, ...(tenant ? { tenant } : {}) };
      return poolPost(`${pool.url}/v1/classify`, text, await signatureHeaders(SECRET, call));
    };
    await Promise.all(Array.from({ length: 10 }, (_, i) => signedCall(i)));
    // globex's flood reaches the pool from other isolates: 30 requests without a deadline, signed as the edge signs.
    const flood = Array.from({ length: 30 }, (_, i) => signedCall(i, "globex"));
    await until("the flood in flight", async () => {
      const text = (await poolGet(`${pool.url}/metrics`)).body as string;
      return metric(text, "edgecascade_inference_pending_requests") >= 10;
    });
    const unsure = { model: "digits", inputs: unsureRows[0]!.input };
    const budget = { "x-edgecascade-budget-ms": "5000" };
    const [shed, reserved] = await Promise.all([
      post(worker, "/v1/classify", unsure, { headers: { "x-api-key": "globex-key", ...budget } }),
      post(worker, "/v1/classify", unsure, { headers: { "x-api-key": "acme-key", ...budget } }),
    ]);
    expect(shed.status).toBe(200);
    expect(shed.body.servedBy).toBe("degraded");
    expect(shed.headers.get("x-edgecascade-degraded")).toBe("tenant-shed");
    expectScores(shed.body, [unsureRows[0]!], "digits-edge");
    expect(reserved.status).toBe(200);
    expect(reserved.body.servedBy).toBe("regional:us");
    expectScores(reserved.body, [unsureRows[0]!], "digits");
    // Within the pool's Retry-After (1 s) the isolate sends it none of globex's rows: answered degraded at once.
    // (Another row: acme's regional answer to the first is in the cache now.)
    const another = { model: "digits", inputs: unsureRows[1]!.input };
    const again = await post(worker, "/v1/classify", another, { headers: { "x-api-key": "globex-key", ...budget } });
    expect(again.headers.get("x-edgecascade-degraded")).toBe("tenant-shed");
    await Promise.all(flood);

    // The region is healthy: the shed call counts as shed, not as a failure of the region.
    const regions = await getJson<StatusBody>(worker, "/status/regions", { "x-api-key": "acme-key" });
    const us = regions.body.isolate.regions.find((r) => r.name === "us")!;
    expect(us.breaker.state).toBe("closed");
    expect(us.counters).toMatchObject({ failed: 0, shed: 1, shedBackoff: 1 });
    // The pool counted each edge tenant as its own, from the signed header.
    const text = (await poolGet(`${pool.url}/metrics`)).body as string;
    const count = (tenant: string, outcome: string) =>
      metric(text, "edgecascade_tenant_requests_total", { tenant, outcome });
    expect(count("globex", "shed")).toBe(1);
    expect(count("acme", "success")).toBe(1);
    expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "acme", share: "reserved" })).toBe(1);
  });
});
