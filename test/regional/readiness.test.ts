import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "../support/regional-process.ts";
import {
  classifyRows,
  copyModels,
  counted,
  get,
  post,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";

let models: ReturnType<typeof copyModels>;
let server: TestServer | undefined;
beforeEach(() => {
  models = copyModels();
});
afterEach(async () => {
  await server?.shutdown();
  server = undefined;
  models.remove();
});

const loads = async (url: string, outcome: string) =>
  counted((await get(`${url}/metrics`)).body, "edgecascade_model_loads_total", { model: "digits", outcome });

describe("readiness sequencing", () => {
  it("ready for the others while a model cannot load, which its own readiness reports; concurrent checks then share one load", async () => {
    const file = join(models.dir, "digits", "1", "model.onnx");
    renameSync(file, `${file}.away`);
    // No retry backoff: this test is about checks sharing a load (the backoff has its own tests below).
    server = await startTestServer(
      testOptions(["--models", models.dir]),
      { loadChecks: { retryBackoff: { initialMs: 0, maxMs: 0 } } },
      { waitReady: false },
    );
    const { url } = server;
    expect((await get(`${url}/v2/health/live`)).status).toBe(200);
    await server.loaded;

    // The pod stays ready for the models that serve, and names the one that failed (repository.ts `ready`).
    const ready = await get(`${url}/v2/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      ready: true,
      failed: [{ model: "digits", reason: expect.stringMatching(/^cannot read digits\/1\/model\.onnx/) }],
      models: { available: 4, loaded: 3 },
    });
    expect(await get(`${url}/v2/models/digits/ready`)).toMatchObject({
      status: 503,
      body: { name: "digits", ready: false, reason: expect.stringMatching(/cannot read digits\/1\/model\.onnx/) },
    });
    expect((await get(`${url}/v2/models/digits-edge/ready`)).status).toBe(200);
    expect((await post(`${url}/v1/classify`, classifyRows(0))).status).toBe(503);
    expect((await get(`${url}/v2/health/live`)).status).toBe(200);

    // Wait until the retry that the check above started has failed too, so no load is in flight.
    while (server.repository.index().some((e) => e.state === "LOADING")) await new Promise((r) => setTimeout(r, 10));
    const failuresBefore = await loads(url, "failure");
    const successesBefore = await loads(url, "success");
    expect(successesBefore).toBe(0);

    // The file arrives; a burst of concurrent readiness checks (server and model) starts exactly one load.
    renameSync(`${file}.away`, file);
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => get(`${url}${i % 2 ? "/v2/health/ready" : "/v2/models/digits/ready"}`)),
    );
    for (const res of burst) expect([200, 503]).toContain(res.status);
    while ((await get(`${url}/v2/models/digits/ready`)).status !== 200) await new Promise((r) => setTimeout(r, 10));
    expect((await get(`${url}/v2/health/ready`)).body).toEqual({ ready: true, models: { available: 4, loaded: 4 } });
    expect(await loads(url, "success")).toBe(1);
    expect(await loads(url, "failure")).toBe(failuresBefore);
    expect((await post(`${url}/v1/classify`, classifyRows(0))).status).toBe(200);
  });

  it("after a failed load, readiness checks start no new one within the backoff; admin loads and SIGHUP do", async () => {
    const file = join(models.dir, "digits", "1", "model.onnx");
    renameSync(file, `${file}.away`);
    // A backoff no test outlasts: any load after the first one below is an explicit one.
    server = await startTestServer(
      testOptions(["--models", models.dir], { ADMIN_TOKEN: "token" }),
      { loadChecks: { retryBackoff: { initialMs: 600_000, maxMs: 600_000 } } },
      { waitReady: false },
    );
    const { url } = server;
    await server.loaded;
    expect(await loads(url, "failure")).toBe(1);

    for (let i = 0; i < 10; i++) {
      const ready = await get(`${url}${i % 2 ? "/v2/health/ready" : "/v2/models/digits/ready"}`);
      expect(ready.status).toBe(i % 2 ? 200 : 503);
    }
    expect(server.repository.index().filter((e) => e.state === "LOADING")).toEqual([]);
    expect(await loads(url, "failure")).toBe(1);

    // An explicit load retries at once.
    const admin = await post(`${url}/v2/repository/models/digits/load`, "", { authorization: "Bearer token" });
    expect(admin).toMatchObject({ status: 400, body: { code: "load_failed" } });
    expect(await loads(url, "failure")).toBe(2);

    // So does SIGHUP's reload, once the file is back.
    renameSync(`${file}.away`, file);
    expect((await get(`${url}/v2/models/digits/ready`)).status).toBe(503);
    await server.reload();
    expect((await get(`${url}/v2/models/digits/ready`)).status).toBe(200);
    expect(await loads(url, "success")).toBe(1);
  });

  it("once the backoff has passed, a readiness check loads again", async () => {
    const file = join(models.dir, "digits", "1", "model.onnx");
    renameSync(file, `${file}.away`);
    server = await startTestServer(
      testOptions(["--models", models.dir]),
      { loadChecks: { retryBackoff: { initialMs: 50, maxMs: 50 } } },
      { waitReady: false },
    );
    await server.loaded;
    renameSync(`${file}.away`, file);
    await until(
      "a readiness check loads digits",
      async () => (await get(`${server!.url}/v2/models/digits/ready`)).status === 200,
    );
    expect(await loads(server.url, "success")).toBe(1);
  });

  it("a model is ready only after a warm-up inference within the budget", async () => {
    // A budget no inference can meet: every load fails on warm-up; with no model serving, the pod is not ready.
    server = await startTestServer(
      testOptions(["--models", models.dir]),
      { loadChecks: { warmupBudgetMs: 1e-9 } },
      { waitReady: false },
    );
    await server.loaded;
    const ready = await get(`${server.url}/v2/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.body.reasons.join()).toMatch(
      /warm-up inference took [\d.]+ ms at best \(3 tries\), over the 1e-9 ms budget/,
    );
    expect((await get(`${server.url}/v2/models/digits/ready`)).status).toBe(503);
  });

  it("a file whose checksum does not match is never served, not even at start", async () => {
    writeFileSync(join(models.dir, "digits", "1", "model.onnx"), "tampered");
    server = await startTestServer(testOptions(["--models", models.dir]), {}, { waitReady: false });
    await server.loaded;
    const ready = await get(`${server.url}/v2/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.failed).toEqual([{ model: "digits", reason: expect.stringMatching(/^checksum mismatch/) }]);
    const res = await post(`${server.url}/v1/classify`, classifyRows(0));
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/^model "digits" is not ready: .*checksum mismatch/);
    expect(server.logs.find((l) => l.msg === "model load failed")?.reason).toMatch(/checksum mismatch/);
  });

  it("readiness turns false as soon as draining starts", async () => {
    server = await startTestServer(testOptions(["--models", models.dir, "--shutdown-delay-ms", "2000"]));
    expect((await get(`${server.url}/v2/health/ready`)).status).toBe(200);
    const stopping = server.shutdown();
    expect(await get(`${server.url}/v2/health/ready`)).toMatchObject({
      status: 503,
      body: { ready: false, reasons: ["draining"] },
    });
    expect((await get(`${server.url}/v2/health/live`)).status).toBe(200);
    await stopping;
  });
});
