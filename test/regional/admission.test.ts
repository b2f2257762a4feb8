import { describe, expect, it } from "vitest";
import { DEADLINE_HEADER, TENANT_HEADER } from "../../protocol/headers.ts";
import {
  classifyRows,
  counted,
  get,
  metric,
  post,
  startTestServer,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const labels = { model: "digits", version: "1" };
const metricsOf = async (url: string) => (await get(`${url}/metrics`)).body as string;

describe("bounded queue", () => {
  it.each([
    [429, []],
    [503, ["--queue-full-status", "503"]],
  ] as const)(
    "a full queue answers %i with Retry-After; everything admitted is answered correctly",
    async (status, flags) => {
      // One waiting request at most, one request per run: a burst of 300 must overflow.
      const server = await startTestServer(testOptions(["--max-queue", "1", "--max-batch", "1", ...flags]));
      try {
        const answers = await Promise.all(
          Array.from({ length: 300 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i % 360))),
        );
        const refused = answers.filter((a) => a.status === status);
        const served = answers.filter((a) => a.status === 200);
        expect(refused.length).toBeGreaterThan(0);
        expect(served.length).toBeGreaterThan(0);
        expect(refused.length + served.length).toBe(300);
        for (const r of refused) {
          expect(r.headers["retry-after"]).toBe("1");
          expect(r.body).toEqual({ error: "the model's queue is full; retry shortly", code: "queue_full" });
        }
        answers.forEach((a, i) => {
          if (a.status === 200) expect(worstDifference(a.body.predictions, i % 360)).toBeLessThanOrEqual(TOLERANCE);
        });
        const text = await metricsOf(server.url);
        expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "rejected" })).toBe(
          refused.length,
        );
        expect(metric(text, "edgecascade_inference_rows_total", labels)).toBe(served.length);
      } finally {
        await server.shutdown();
      }
    },
  );
});

describe("deadlines", () => {
  it("a request whose deadline has passed is answered 504 and never run", async () => {
    const server = await startTestServer(testOptions());
    try {
      const res = await post(`${server.url}/v1/classify`, classifyRows(0), { [DEADLINE_HEADER]: "0" });
      expect(res).toMatchObject({ status: 504, body: { code: "deadline_exceeded" } });
      const text = await metricsOf(server.url);
      expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "expired" })).toBe(1);
      expect(counted(text, "edgecascade_inference_executions_total", labels)).toBe(0);
      expect(counted(text, "edgecascade_inference_rows_total", labels)).toBe(0);
      // A generous deadline is answered.
      const ok = await post(`${server.url}/v1/classify`, classifyRows(1), { [DEADLINE_HEADER]: "5000" });
      expect(ok.status).toBe(200);
    } finally {
      await server.shutdown();
    }
  });

  it("a deadline that runs out while the request waits (here: simulated distance) is a 504 without running", async () => {
    const server = await startTestServer(testOptions(["--delay-ms", "300"]));
    try {
      const started = performance.now();
      const res = await post(
        `${server.url}/v2/models/digits/infer`,
        {
          inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: classifyRows(0).inputs }],
        },
        { [DEADLINE_HEADER]: "30" },
      );
      expect(res).toMatchObject({ status: 504, body: { code: "deadline_exceeded" } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      const text = await metricsOf(server.url);
      expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "expired" })).toBe(1);
      expect(counted(text, "edgecascade_inference_executions_total", labels)).toBe(0);
      const ok = await post(`${server.url}/v1/classify`, classifyRows(2), { [DEADLINE_HEADER]: "10000" });
      expect(ok.status).toBe(200);
      expect(ok.headers["server-timing"]).toMatch(/delay;dur=300/);
    } finally {
      await server.shutdown();
    }
  });

  it("a malformed deadline header is a 400 naming the header", async () => {
    const server = await startTestServer(testOptions());
    try {
      const res = await post(`${server.url}/v1/classify`, classifyRows(0), { [DEADLINE_HEADER]: "soon" });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(DEADLINE_HEADER);
    } finally {
      await server.shutdown();
    }
  });
});

/** Wait until at least `n` requests are being handled (the pending-requests gauge). */
async function inFlight(url: string, n: number): Promise<void> {
  while (metric(await metricsOf(url), "edgecascade_inference_pending_requests") < n) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("admission by deadline", () => {
  it("refuses at once, before reading the body, what cannot be answered within its deadline; admits the rest", async () => {
    // Each request takes 200 ms (simulated distance) and one row is a batch: the answering rate is measurable
    // and the work in flight piles up.
    const server = await startTestServer(testOptions(["--delay-ms", "200", "--max-batch", "1"]));
    try {
      // 10 answers within a few hundred ms: the pool answers in the order of 50-100 requests per second.
      const first = await Promise.all(
        Array.from({ length: 10 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i))),
      );
      expect(first.every((r) => r.status === 200)).toBe(true);
      // 30 requests without a deadline (always admitted) in flight: about 300-600 ms of work ahead.
      const ahead = Array.from({ length: 30 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i)));
      await inFlight(server.url, 10);
      // An invalid body with a 50 ms deadline: refused before the body is read (a 429, not a 400).
      const refused = await post(`${server.url}/v1/classify`, "{", { [DEADLINE_HEADER]: "50" });
      expect(refused.status).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.body.code).toBe("overloaded");
      expect(refused.body.error).toMatch(/^the pool is overloaded: about \d+ ms of work ahead, the deadline is 50 ms/);
      // A malformed deadline header is the client's mistake whatever the load: a 400 before admission, on the
      // fast path and on the Hono route (a query string sends it there).
      for (const url of [`${server.url}/v1/classify`, `${server.url}/v1/classify?via=hono`]) {
        for (const value of ["", "-5", "2.5"]) {
          const malformed = await post(url, classifyRows(0), { [DEADLINE_HEADER]: value });
          expect(malformed.status, `${url} ${JSON.stringify(value)}`).toBe(400);
          expect(malformed.body.error).toBe(
            `${DEADLINE_HEADER} must be a whole number of milliseconds, from 0 to 3600000, got ${JSON.stringify(value)}`,
          );
        }
      }
      // A deadline long enough for the work ahead is admitted and answered.
      const admitted = await post(`${server.url}/v1/classify`, classifyRows(3), { [DEADLINE_HEADER]: "20000" });
      expect(admitted.status).toBe(200);
      expect(worstDifference(admitted.body.predictions, 3)).toBeLessThanOrEqual(TOLERANCE);
      expect((await Promise.all(ahead)).every((r) => r.status === 200)).toBe(true);
    } finally {
      await server.shutdown();
    }
  });

  it("answers 503 instead when the queue-full status is 503", async () => {
    const server = await startTestServer(
      testOptions(["--delay-ms", "200", "--max-batch", "1", "--queue-full-status", "503"]),
    );
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i))));
      const ahead = Array.from({ length: 30 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i)));
      await inFlight(server.url, 10);
      const refused = await post(`${server.url}/v1/classify`, classifyRows(0), { [DEADLINE_HEADER]: "50" });
      expect(refused).toMatchObject({ status: 503, body: { code: "overloaded" } });
      expect(refused.headers["retry-after"]).toBe("1");
      const malformed = await post(`${server.url}/v1/classify`, classifyRows(0), { [DEADLINE_HEADER]: "-50" });
      expect(malformed).toMatchObject({ status: 400, body: { code: "bad_request" } });
      await Promise.all(ahead);
    } finally {
      await server.shutdown();
    }
  });
});

describe("tenants at admission", () => {
  it("sheds a flooding best-effort tenant first (429 tenant_shed), admits a reservation and a quiet tenant, counts each", async () => {
    // As above: 200 ms per request, one row per run. Best-effort requests may wait 1% of their deadline.
    const server = await startTestServer(
      testOptions([
        "--delay-ms",
        "200",
        "--max-batch",
        "1",
        "--tenants",
        "acme=guaranteed:1000,globex=best-effort",
        "--best-effort-wait-percent",
        "1",
      ]),
    );
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i))));
      // globex's flood: 30 requests without a deadline (always admitted), a few hundred ms of work ahead.
      const flood = Array.from({ length: 30 }, (_, i) =>
        post(`${server.url}/v1/classify`, classifyRows(i), { [TENANT_HEADER]: "globex" }),
      );
      await inFlight(server.url, 10);
      const as = (tenant: string, row: number) =>
        post(`${server.url}/v1/classify`, classifyRows(row), { [DEADLINE_HEADER]: "5000", [TENANT_HEADER]: tenant });
      const [shed, reserved, quiet, malformed] = await Promise.all([
        as("globex", 0),
        as("acme", 5),
        // Not declared: `other`, best-effort, with nothing in flight: under its share of the room globex filled.
        as("initech", 6),
        as("bad tenant", 7),
      ]);
      expect(shed).toMatchObject({ status: 429, body: { code: "tenant_shed" } });
      expect(shed.body.error).toMatch(/^tenant "globex" is best-effort and the pool is serving reservations first/);
      expect(shed.headers["retry-after"]).toBe("1");
      expect(reserved.status).toBe(200);
      expect(worstDifference(reserved.body.predictions, 5)).toBeLessThanOrEqual(TOLERANCE);
      expect(quiet.status).toBe(200);
      expect(malformed).toMatchObject({ status: 400, body: { error: expect.stringContaining(TENANT_HEADER) } });
      expect((await Promise.all(flood)).every((r) => r.status === 200)).toBe(true);

      const text = await metricsOf(server.url);
      const count = (tenant: string, outcome: string) =>
        metric(text, "edgecascade_tenant_requests_total", { tenant, outcome });
      expect(count("globex", "shed")).toBe(1);
      expect(count("globex", "success")).toBe(30);
      expect(count("acme", "success")).toBe(1);
      expect(count("other", "success")).toBe(1);
      expect(count("direct", "success")).toBe(10);
      expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "acme", share: "reserved" })).toBe(1);
      expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "globex", share: "best-effort" })).toBe(30);
      expect(metric(text, "edgecascade_tenant_request_duration_seconds_count", { tenant: "globex" })).toBe(30);
      expect(metric(text, "edgecascade_tenant_reserved_rows_per_second", { tenant: "acme" })).toBe(1000);
      const labels = new Set(
        [...text.matchAll(/edgecascade_tenant_requests_total\{tenant="([^"]+)"/g)].map((m) => m[1]),
      );
      expect([...labels].sort()).toEqual(["acme", "direct", "globex", "other"]);
    } finally {
      await server.shutdown();
    }
  });
});
