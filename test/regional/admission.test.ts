import { describe, expect, it } from "vitest";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import {
  classifyRows,
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
      expect(metric(text, "edgecascade_inference_executions_total", labels)).toBe(0);
      expect(metric(text, "edgecascade_inference_rows_total", labels)).toBe(0);
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
      expect(metric(text, "edgecascade_inference_executions_total", labels)).toBe(0);
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
