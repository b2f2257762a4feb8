import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUOTA_HEADER } from "../../protocol/headers.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { until } from "../support/regional-process.ts";
import { confidentRows } from "./support.ts";

// Tenants' global quotas (a Durable Object per tenant, leased to isolates in slices) and per-location limits (a
// rate-limiting binding keyed by tenant), in workerd against Miniflare's own Durable Objects and limiter.

const KEYS = [
  { key: "acme-1", tenant: "acme" },
  { key: "acme-2", tenant: "acme" },
  { key: "initech-1", tenant: "initech" },
  { key: "initech-2", tenant: "initech" },
  { key: "ops", tenant: "ops" },
];
const QUOTA = 60;
const SLICE = 10;
const INSTANCES = 3;
const TENANTS = [
  { tenant: "acme", quota: { requests: QUOTA, per: "day" } },
  { tenant: "initech", rateLimiter: "TENANT_RATE_LIMITER" },
];
const VARS = {
  REGIONS: "[]",
  API_KEYS: JSON.stringify(KEYS),
  TENANTS: JSON.stringify(TENANTS),
  QUOTA_SLICE: String(SLICE),
};
const body = JSON.stringify({ model: "digits", inputs: confidentRows[0]!.input, parameters: { cascade: "edge" } });

type Fetch = (url: string, init?: RequestInit) => Promise<Response>;
const classifyWith = (fetch: Fetch, url: string, key: string) =>
  fetch(`${url}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body,
  });

interface QuotaStatus {
  quota: { requests: number; per: string };
  global: { period: string; used: number } | null;
  isolate: {
    leased: number;
    credit: number;
    unmetered: number;
    refused: number;
    calls: number;
    failedCalls: number;
    leaseLeft: number;
  };
}
async function quotaStatus(fetch: Fetch, url: string, tenant = "acme"): Promise<QuotaStatus> {
  const res = await fetch(`${url}/status`, { headers: { "x-api-key": "ops" } });
  return ((await res.json()) as { quotas: Record<string, QuotaStatus> }).quotas[tenant]!;
}

describe("a tenant's global quota across Worker instances", () => {
  let worker: EdgeWorker;
  let instances: Fetch[];

  beforeAll(async () => {
    worker = await startEdgeWorker({
      vars: VARS,
      instances: INSTANCES,
      rateLimit: false,
      rateLimits: { TENANT_RATE_LIMITER: { limit: 4, period: 60 } },
    });
    instances = await Promise.all(Array.from({ length: INSTANCES }, (_, i) => worker.instance(i)));
  });
  afterAll(() => worker?.dispose());

  it(`holds the tenant to its quota within the bound: at most one request per isolate over, at most a slice per isolate under`, async () => {
    // Each isolate's first request is served on credit while it asks for its first lease.
    for (const fetch of instances) expect((await classifyWith(fetch, worker.url, "acme-1")).status).toBe(200);
    for (const fetch of instances) {
      await until(
        "the isolate's first lease",
        async () => (await quotaStatus(fetch, worker.url)).isolate.leaseLeft > 0,
      );
    }
    // Then the tenant's two keys, through every isolate in turn, until well past the quota.
    const statuses: number[] = [];
    const refusals: Response[] = [];
    for (let i = 0; i < 2 * QUOTA; i++) {
      const res = await classifyWith(instances[i % INSTANCES]!, worker.url, i % 2 ? "acme-1" : "acme-2");
      statuses.push(res.status);
      if (res.status === 429) refusals.push(res);
      else await res.arrayBuffer();
    }
    const served = INSTANCES + statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(served).toBeLessThanOrEqual(QUOTA + INSTANCES);
    expect(served).toBeGreaterThanOrEqual(QUOTA - INSTANCES * SLICE);
    // Once every isolate's lease is spent, every request is refused (an isolate may refuse while another still
    // serves what its lease holds).
    expect(statuses.slice(-2 * INSTANCES)).toEqual(Array(2 * INSTANCES).fill(429));

    const refused = refusals[0]!;
    expect(await refused.json()).toEqual({
      error: `tenant "acme" has used its quota of ${QUOTA} requests this day`,
      code: "quota_exceeded",
    });
    // Retry-After: until the day (UTC) ends.
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((midnight - now.getTime()) / 1000) + 1);

    const status = await quotaStatus(instances[0]!, worker.url);
    expect(status.global?.used).toBeGreaterThanOrEqual(QUOTA);
    expect(status.global?.used).toBeLessThanOrEqual(QUOTA + INSTANCES);
    expect(status.isolate.credit).toBe(1);
    expect(status.isolate.unmetered).toBe(0);
    expect(status.isolate.refused).toBeGreaterThan(0);
    // Another tenant has no quota and is not held to acme's.
    expect((await classifyWith(instances[1]!, worker.url, "ops")).status).toBe(200);
  });

  it("limits a tenant per location through the rate-limiting binding keyed by tenant: all its keys together", async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await classifyWith(instances[0]!, worker.url, i % 2 ? "initech-1" : "initech-2");
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
      else await res.arrayBuffer();
    }
    // Four per minute for the tenant, counted across both keys (Miniflare's limiter counts as the binding does).
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(statuses.slice(4)).toEqual([429, 429, 429, 429]);
    expect(await limited!.json()).toEqual({
      error: 'rate limit of tenant "initech" exceeded in this location',
      code: "rate_limited",
    });
    expect(limited!.headers.get("retry-after")).toBe("60");
    expect((await classifyWith(instances[0]!, worker.url, "ops")).status).toBe(200);
  });
});

describe("a tenant's quota when its Durable Object cannot be reached", () => {
  let worker: EdgeWorker;
  beforeAll(async () => {
    worker = await startEdgeWorker({ vars: VARS, rateLimit: false, quotaObject: "failing" });
  });
  afterAll(() => worker?.dispose());

  it("fails open: serves the tenant, says so on the answer, and counts it", async () => {
    const fetch: Fetch = (url, init) => worker.dispatchFetch(url, init as never) as unknown as Promise<Response>;
    // The first request is served on credit while the isolate asks; the call fails.
    expect((await classifyWith(fetch, worker.url, "acme-1")).status).toBe(200);
    await until("the failed call", async () => (await quotaStatus(fetch, worker.url)).isolate.failedCalls > 0);
    const fast = await classifyWith(fetch, worker.url, "acme-2");
    expect(fast.status).toBe(200);
    expect(fast.headers.get(QUOTA_HEADER)).toBe("unmetered");
    // The Hono app's road (v2 infer) says the same.
    const v2 = await fetch(`${worker.url}/v2/models/digits/infer`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "acme-1" },
      body: JSON.stringify({
        inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: confidentRows[0]!.input }],
        parameters: { cascade: "edge" },
      }),
    });
    expect(v2.status).toBe(200);
    expect(v2.headers.get(QUOTA_HEADER)).toBe("unmetered");
    const status = await quotaStatus(fetch, worker.url);
    expect(status.global).toBeNull();
    expect(status.isolate).toMatchObject({ credit: 1, unmetered: 2, refused: 0 });
    expect(status.isolate.failedCalls).toBeGreaterThanOrEqual(1);
    // Other tenants' answers never carry the header.
    const ops = await classifyWith(fetch, worker.url, "ops");
    expect(ops.headers.get(QUOTA_HEADER)).toBeNull();
  });
});
