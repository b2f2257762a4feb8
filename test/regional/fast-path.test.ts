import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimited } from "../../protocol/errors.ts";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import type { AppDeps } from "../../regional/app-context.ts";
import { inferenceFastPath } from "../../regional/fast-path/listener.ts";
import { inferenceAnswers } from "../../regional/inference-answers.ts";
import { inferenceAdmission } from "../../regional/middleware/admit-in-time.ts";
import { localControl } from "../../regional/model-control.ts";
import { TenantScheduler } from "../../regional/tenants/tenant-scheduler.ts";
import { tenantTable } from "../../regional/tenants/tenant-table.ts";
import { TRACING_OFF } from "../../regional/tracing/request-tracing.ts";
import { heldout } from "../support/heldout.ts";
import { classifyRows, get, metric, post, serverForFile, testOptions } from "../support/regional-server.ts";

const server = serverForFile(testOptions(["--region", "eu"]));

const row = heldout.rows[0]!.input;
const v2 = (data: unknown, extra: Record<string, unknown> = {}) => ({
  inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data, ...extra }],
});

/** Requests of every outcome the inference routes have; each is sent along both paths. */
const CASES: { name: string; path: string; body: unknown; headers?: Record<string, string> }[] = [
  { name: "one row", path: "/v1/classify", body: { ...classifyRows(3), id: "x" } },
  { name: "a batch", path: "/v1/classify", body: classifyRows(10, 3) },
  { name: "v2 infer", path: "/v2/models/digits/infer", body: v2(row) },
  { name: "v2 infer, pinned version", path: "/v2/models/digits/versions/1/infer", body: v2(row) },
  { name: "v2 infer, unknown version", path: "/v2/models/digits/versions/7/infer", body: v2(row) },
  { name: "unknown model", path: "/v1/classify", body: { model: "nope", inputs: row } },
  { name: "unknown field", path: "/v1/classify", body: { ...classifyRows(0), foo: 1 } },
  { name: "short row", path: "/v1/classify", body: { model: "digits", inputs: [1, 2, 3] } },
  { name: "invalid JSON", path: "/v1/classify", body: '{"model":' },
  { name: "empty body", path: "/v1/classify", body: "" },
  { name: "not JSON", path: "/v1/classify", body: classifyRows(0), headers: { "content-type": "text/plain" } },
  { name: "65 rows", path: "/v1/classify", body: { model: "digits", inputs: Array.from({ length: 65 }, () => row) } },
  { name: "over 256 KiB", path: "/v1/classify", body: { model: "digits", inputs: new Array(300_000).fill(1) } },
  { name: "bad deadline", path: "/v1/classify", body: classifyRows(0), headers: { [DEADLINE_HEADER]: "soon" } },
  { name: "deadline passed", path: "/v1/classify", body: classifyRows(0), headers: { [DEADLINE_HEADER]: "0" } },
  {
    name: "v2 wrong shape",
    path: "/v2/models/digits/infer",
    body: { inputs: [{ ...v2(row).inputs[0], shape: [2, 64] }] },
  },
];

/** What must be the same along both paths: status, the headers a client reads, and the body (timings aside). */
function comparable(res: Awaited<ReturnType<typeof post>>) {
  const { headers } = res;
  return {
    status: res.status,
    body: res.body,
    headers: {
      "content-type": headers["content-type"],
      "x-served-by": headers["x-served-by"],
      "x-model-version": headers["x-model-version"],
      connection: headers.connection,
      "retry-after": headers["retry-after"],
      "server-timing": headers["server-timing"]?.replace(/dur=[\d.]+/g, "dur=T").replace(/batch of \d+/, "batch of N"),
    },
  };
}

describe("the node:http fast path and the Hono routes", () => {
  it.each(CASES)("answer alike: $name", async ({ path, body, headers }) => {
    // A query string is one of the things the fast path leaves to Hono (regional/fast-path/route.ts).
    const fast = await post(`${server.url}${path}`, body, headers);
    const hono = await post(`${server.url}${path}?via=hono`, body, headers);
    expect(comparable(fast)).toEqual(comparable(hono));
    expect(fast.status).toBeGreaterThanOrEqual(200);
  });

  it("answer alike for a chunked body, which Hono takes", async () => {
    const body = JSON.stringify(classifyRows(7));
    const chunked = await request(`${server.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Readable.from([body.slice(0, 40), body.slice(40)]),
    });
    const fast = await post(`${server.url}/v1/classify`, body);
    expect(chunked.statusCode).toBe(200);
    expect(await chunked.body.json()).toEqual(fast.body);
  });

  it("count their responses under the same route patterns", async () => {
    const before = (await get(`${server.url}/metrics`)).body as string;
    await post(`${server.url}/v2/models/digits/infer`, v2(row));
    await post(`${server.url}/v2/models/digits/infer?via=hono`, v2(row));
    await post(`${server.url}/v2/models/digits/versions/1/infer`, v2(row));
    await post(`${server.url}/v2/models/digits/versions/1/infer?via=hono`, v2(row));
    const after = (await get(`${server.url}/metrics`)).body as string;
    const count = (text: string, route: string) =>
      metric(text, "edgecascade_http_responses_total", { method: "POST", route, status: "200" });
    expect(count(after, "/v2/models/:model/infer") - count(before, "/v2/models/:model/infer")).toBe(2);
    const versioned = "/v2/models/:model/versions/:version/infer";
    expect(count(after, versioned) - count(before, versioned)).toBe(2);
  });
});

describe("inferenceFastPath", () => {
  let http: Server;
  let url: string;
  const handedOver: string[] = [];
  beforeAll(async () => {
    const tenants = new TenantScheduler(tenantTable([]), server.metrics.recorder, 64, 0);
    const deps: AppDeps = {
      region: "eu",
      repository: server.repository,
      rollouts: server.rollouts,
      control: localControl(server.repository, server.rollouts),
      modelSigningKey: undefined,
      recorder: server.metrics.recorder,
      provider: "cpu" as const,
      metricsText: server.metrics.text,
      statistics: async () => server.metrics.statistics(),
      metricsContentType: server.metrics.contentType,
      draining: () => false,
      poolNotReady: () => undefined,
      log: () => {},
      limits: DEFAULT_LIMITS,
      maxQueueDelayUs: 0,
      simulatedDelayMs: 0,
      admission: inferenceAdmission({
        minInFlight: 64,
        refuse: () => new RateLimited("overloaded", 1),
        tenants,
        shed: () => new RateLimited("shed", 1, "tenant_shed"),
      }),
      tenants,
      tracing: TRACING_OFF,
    };
    http = createServer(
      inferenceFastPath({
        deps,
        answers: inferenceAnswers(deps),
        fallback: (req, res) => {
          handedOver.push(`${req.method} ${req.url}`);
          res.writeHead(418).end();
        },
      }),
    );
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it("answers the inference POSTs itself and hands everything else over", async () => {
    expect((await post(`${url}/v1/classify`, classifyRows(1))).status).toBe(200);
    expect((await post(`${url}/v2/models/digits/infer`, v2(row))).status).toBe(200);
    expect((await post(`${url}/v1/classify`, { model: "digits", inputs: [1] })).status).toBe(400);
    expect(handedOver).toEqual([]);
    expect((await get(`${url}/v1/classify`)).status).toBe(418);
    expect((await post(`${url}/v1/classify?x=1`, classifyRows(1))).status).toBe(418);
    expect((await post(`${url}/v2/models/digits/ready`, {})).status).toBe(418);
    expect(handedOver).toEqual(["GET /v1/classify", "POST /v1/classify?x=1", "POST /v2/models/digits/ready"]);
  });
});
