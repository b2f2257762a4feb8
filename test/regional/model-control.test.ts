import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { heldout, modelConfig } from "../support/heldout.ts";
import { until } from "../support/regional-process.ts";
import {
  addVersion,
  classifyRows,
  copyModels,
  counted,
  get,
  metric,
  post,
  startTestServer,
  type TestServer,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const TOKEN = "admin-token-for-tests";
const digitsV1 = modelConfig("digits").versions["1"]!;
const auth = { authorization: `Bearer ${TOKEN}` };

let models: ReturnType<typeof copyModels>;
let server: TestServer;
beforeEach(async () => {
  models = copyModels();
  server = await startTestServer(testOptions(["--models", models.dir], { ADMIN_TOKEN: TOKEN }));
});
afterEach(async () => {
  await server.shutdown();
  models.remove();
});

const load = (model: string, body: unknown = "", headers: Record<string, string> = auth) =>
  post(`${server.url}/v2/repository/models/${model}/load`, body, headers);
const servedVersion = async () => (await post(`${server.url}/v1/classify`, classifyRows(0))).body.version;
const metricsText = async () => (await get(`${server.url}/metrics`)).body as string;

describe("admin token", () => {
  it.each([
    ["no Authorization header", {}],
    ["a wrong token", { authorization: "Bearer not-the-token" }],
    ["another scheme", { authorization: `Basic ${TOKEN}` }],
  ])("%s: 401", async (_, headers) => {
    for (const path of [
      "/v2/repository/index",
      "/v2/repository/models/digits/load",
      "/v2/repository/models/digits/unload",
    ]) {
      const res = await post(`${server.url}${path}`, "", headers);
      expect(res).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    }
    expect(await servedVersion()).toBe("1");
  });

  it("without ADMIN_TOKEN configured, model control is refused for everyone", async () => {
    const open = await startTestServer(testOptions(["--models", models.dir]));
    try {
      const res = await post(`${open.url}/v2/repository/index`, "", auth);
      expect(res).toMatchObject({ status: 401, body: { error: "model control is disabled: ADMIN_TOKEN is not set" } });
    } finally {
      await open.shutdown();
    }
  });
});

describe("repository index", () => {
  it("lists every model with its version and state", async () => {
    const res = await post(`${server.url}/v2/repository/index`, "", auth);
    expect(res.status).toBe(200);
    const states = res.body.map(({ name, version, state }: Record<string, string>) => ({ name, version, state }));
    expect(states).toEqual(
      ["breast-cancer", "breast-cancer-edge", "digits", "digits-edge"].map((name) => ({
        name,
        version: "1",
        state: "READY",
      })),
    );
    // Each serving model is described as /v2/models/{name} describes it.
    for (const entry of res.body) {
      const config = modelConfig(entry.name);
      expect(entry).toMatchObject({ inputs: config.inputs, outputs: config.outputs, labels: config.labels });
      expect((await get(`${server.url}/v2/models/${entry.name}`)).body).toMatchObject({
        name: entry.name,
        versions: ["1"],
        labels: config.labels,
      });
    }
  });
});

describe("loading a new version", () => {
  it("checks, warms up and swaps it in; the response says what was checked", async () => {
    await addVersion(models.dir, "digits", "2");
    const res = await load("digits", { parameters: { version: "2" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: "digits",
      version: "2",
      state: "READY",
      previous: "1",
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      fixture: { rows: heldout.rows.length, accuracy: expect.any(Number), required: expect.any(Number) },
    });
    expect(res.body.fixture.accuracy).toBeGreaterThanOrEqual(res.body.fixture.required);
    expect(res.body.warmupMs).toBeLessThanOrEqual(200);
    expect(await servedVersion()).toBe("2");
    expect((await get(`${server.url}/v2/models/digits`)).body.versions).toEqual(["2"]);
  });

  it("without a body, re-reads config.json and loads the version it names", async () => {
    await addVersion(models.dir, "digits", "3", { makeDefault: true });
    const res = await load("digits");
    expect(res).toMatchObject({ status: 200, body: { version: "3", previous: "1" } });
    expect(await servedVersion()).toBe("3");
  });

  it("hot swap under load: zero failed requests, each client moves from 1 to 2 once, every answer correct", async () => {
    await addVersion(models.dir, "digits", "2");
    let stop = false;
    let afterSwap = 0;
    const failures: string[] = [];
    const client = async (c: number) => {
      const seen: string[] = [];
      for (let i = 0; !stop; i++) {
        const from = (c * 37 + i) % 360;
        const res = await post(`${server.url}/v1/classify`, classifyRows(from));
        if (res.status !== 200) {
          failures.push(`${res.status} ${JSON.stringify(res.body)}`);
          continue;
        }
        if (worstDifference(res.body.predictions, from) > TOLERANCE) failures.push(`wrong answer for row ${from}`);
        if (seen.at(-1) !== res.body.version) seen.push(res.body.version);
        if (res.body.version === "2") afterSwap++;
      }
      return seen;
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    // Let the load run on version 1 first.
    while (metric(await metricsText(), "edgecascade_inference_requests_total", { version: "1" }) < 200) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const swap = await load("digits", { parameters: { version: "2" } });
    expect(swap.status).toBe(200);
    while (afterSwap < 200) await new Promise((r) => setTimeout(r, 20));
    stop = true;
    const histories = await Promise.all(clients);
    expect(failures).toEqual([]);
    for (const seen of histories) expect(seen).toEqual(["1", "2"]);
  });

  it("requests in flight finish on the version they started with; the old session is released after them", async () => {
    await server.shutdown();
    // Each inference request waits 1.5 s first, holding its lease on the version it started with.
    server = await startTestServer(testOptions(["--models", models.dir, "--delay-ms", "1500"], { ADMIN_TOKEN: TOKEN }));
    await addVersion(models.dir, "digits", "2");
    const held = post(`${server.url}/v1/classify`, classifyRows(7));
    while (
      metric(await metricsText(), "edgecascade_inference_pending_requests", { model: "digits", version: "1" }) < 1
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await load("digits", { parameters: { version: "2" } })).status).toBe(200);
    const during = await post(`${server.url}/v2/repository/index`, "", auth);
    expect(during.body.filter((e: { name: string }) => e.name === "digits")).toMatchObject([
      { name: "digits", version: "2", state: "READY" },
      { name: "digits", version: "1", state: "UNLOADING" },
    ]);
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.version).toBe("1");
    expect(worstDifference(res.body.predictions, 7)).toBeLessThanOrEqual(TOLERANCE);
    // The lease is released as the answer is sent; the index follows right after.
    let after = during.body;
    for (let i = 0; i < 100 && after.some((e: { state: string }) => e.state === "UNLOADING"); i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = (await post(`${server.url}/v2/repository/index`, "", auth)).body;
    }
    expect(after.filter((e: { name: string }) => e.name === "digits")).toMatchObject([
      { name: "digits", version: "2", state: "READY" },
    ]);
    expect(after.filter((e: { name: string }) => e.name === "digits")).toHaveLength(1);
    expect(server.logs.some((l) => l.msg === "model version released" && l.version === "1")).toBe(true);
  });

  it("reloading the serving version keeps edgecascade_model_ready at 1", async () => {
    const ready = async () => metric(await metricsText(), "edgecascade_model_ready", { model: "digits", version: "1" });
    expect(await ready()).toBe(1);
    expect(await load("digits")).toMatchObject({ status: 200, body: { version: "1", previous: "1" } });
    await until("the old instance released", () =>
      server.logs.some((l) => l.msg === "model version released" && l.version === "1"),
    );
    expect(await ready()).toBe(1);
    expect(await metricsText()).toContain('edgecascade_model_ready{model="digits",version="1"} 1\n');
  });

  it("reloading the serving version while requests hold it: the gauges count the old instance's requests", async () => {
    await server.shutdown();
    // Each inference request waits 4 s first, holding its lease on the instance it started with.
    server = await startTestServer(testOptions(["--models", models.dir, "--delay-ms", "4000"], { ADMIN_TOKEN: TOKEN }));
    const labels = { model: "digits", version: "1" };
    let answered = false;
    const held = post(`${server.url}/v1/classify`, classifyRows(3)).finally(() => {
      answered = true;
    });
    await until(
      "a request in flight",
      async () => metric(await metricsText(), "edgecascade_inference_pending_requests", labels) === 1,
    );
    expect(await load("digits")).toMatchObject({ status: 200, body: { version: "1", previous: "1" } });
    const during = await metricsText();
    expect(answered, "the held request must still be in flight for this check").toBe(false);
    expect(metric(during, "edgecascade_inference_pending_requests", labels)).toBe(1);
    expect((await held).status).toBe(200);
    await until("the old instance released", () =>
      server.logs.some((l) => l.msg === "model version released" && l.version === "1"),
    );
    expect(await metricsText()).toContain('edgecascade_inference_pending_requests{model="digits",version="1"} 0\n');
  });

  it("a swapped-out version's gauges disappear once it is released", async () => {
    expect(await servedVersion()).toBe("1");
    await addVersion(models.dir, "digits", "2");
    expect((await load("digits", { parameters: { version: "2" } })).status).toBe(200);
    await until("version 1 released", () =>
      server.logs.some((l) => l.msg === "model version released" && l.version === "1"),
    );
    const text = await metricsText();
    for (const name of [
      "edgecascade_inference_queue_depth",
      "edgecascade_inference_pending_requests",
      "edgecascade_model_ready",
    ]) {
      expect(text).not.toContain(`${name}{model="digits",version="1"}`);
    }
    expect(text).toContain('edgecascade_inference_queue_depth{model="digits",version="2"} 0\n');
    expect(text).toContain('edgecascade_model_ready{model="digits",version="2"} 1\n');
    // Counters keep what version 1 did.
    expect(metric(text, "edgecascade_inference_requests_total", { model: "digits", version: "1" })).toBeGreaterThan(0);
  });

  it("concurrent identical loads share one attempt", async () => {
    await addVersion(models.dir, "digits", "2");
    const before = metric(await metricsText(), "edgecascade_model_loads_total", { model: "digits" });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => load("digits", { parameters: { version: "2" } })),
    );
    for (const a of answers) expect(a).toMatchObject({ status: 200, body: { version: "2" } });
    expect(metric(await metricsText(), "edgecascade_model_loads_total", { model: "digits" })).toBe(before + 1);
  });
});

describe("a failed load keeps the old version serving and says why", () => {
  const original = () => readFileSync(join(models.dir, "digits", "1", "model.onnx"));

  it.each([
    [
      "a tampered file (sha256 does not match config.json)",
      async () => {
        const bytes = original();
        const at = bytes.length - 100;
        bytes[at] = bytes[at]! ^ 0xff;
        // config.json keeps the real file's checksum: the bytes on disk are not what was published.
        const published = createHash("sha256").update(original()).digest("hex");
        await addVersion(models.dir, "digits", "2", { bytes, sha256: published });
      },
      new RegExp(
        `checksum mismatch: digits/2/model\\.onnx has sha256 [0-9a-f]{64} \\(${digitsV1.bytes} bytes\\), config\\.json says ${digitsV1.sha256}`,
      ),
    ],
    [
      "a file that is not a model (checksum published for it)",
      () => addVersion(models.dir, "digits", "2", { bytes: new TextEncoder().encode("not an onnx graph") }),
      /cannot create a session/,
    ],
    [
      "a model below the accuracy its config states (fixture check)",
      () => addVersion(models.dir, "digits", "2", { accuracy: 0.999 }),
      // The import measured the held-out accuracy on the same rows the pool checks.
      new RegExp(`fixture accuracy ${digitsV1.accuracy.test.toFixed(4)} is below the required 0\\.9890`),
    ],
    ["a version config.json does not list", async () => {}, /version 2 is not listed in config\.json/],
  ])("%s", async (_, prepare, reason) => {
    await prepare();
    const before = counted(await metricsText(), "edgecascade_model_loads_total", {
      model: "digits",
      outcome: "failure",
    });
    const res = await load("digits", { parameters: { version: "2" } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("load_failed");
    expect(res.body.error).toMatch(reason);
    expect(res.body.error).toMatch(/version 1 keeps serving$/);
    const logged = server.logs.find((l) => l.msg === "model load failed");
    expect(logged).toMatchObject({ level: "warn", model: "digits", version: "2", serving: "1" });
    expect(String(logged?.reason)).toMatch(reason);
    expect(metric(await metricsText(), "edgecascade_model_loads_total", { model: "digits", outcome: "failure" })).toBe(
      before + 1,
    );
    // Still serving version 1, correctly.
    const answer = await post(`${server.url}/v1/classify`, classifyRows(11));
    expect(answer.body.version).toBe("1");
    expect(worstDifference(answer.body.predictions, 11)).toBeLessThanOrEqual(TOLERANCE);
    expect((await get(`${server.url}/v2/health/ready`)).status).toBe(200);
  });

  it("a broken config.json is a failed load, not a crash", async () => {
    writeFileSync(join(models.dir, "digits", "config.json"), "{ not json");
    const res = await load("digits");
    expect(res).toMatchObject({ status: 400, body: { code: "load_failed" } });
    expect(res.body.error).toMatch(/digits\/config\.json: invalid JSON/);
    expect(await servedVersion()).toBe("1");
  });
});

describe("unload and load requests", () => {
  it("unload stops serving (503), ready stays true for the rest; load brings it back", async () => {
    const res = await post(`${server.url}/v2/repository/models/digits/unload`, "", auth);
    expect(res).toMatchObject({ status: 200, body: { name: "digits", state: "UNAVAILABLE" } });
    const refused = await post(`${server.url}/v1/classify`, classifyRows(0));
    expect(refused).toMatchObject({ status: 503, body: { error: 'model "digits" is not ready: unloaded' } });
    expect((await get(`${server.url}/v2/models/digits/ready`)).status).toBe(503);
    expect((await get(`${server.url}/v2/health/ready`)).status).toBe(200);
    const ready = (await post(`${server.url}/v2/repository/index`, { ready: true }, auth)).body;
    expect(ready.map((e: { name: string }) => e.name)).toEqual(["breast-cancer", "breast-cancer-edge", "digits-edge"]);
    expect((await load("digits")).status).toBe(200);
    const back = await post(`${server.url}/v1/classify`, classifyRows(9));
    expect(back.status).toBe(200);
    expect(worstDifference(back.body.predictions, 9)).toBeLessThanOrEqual(TOLERANCE);
  });

  it.each([
    ["an unknown model", "nope", "", 404],
    ["a path-like model name", "..", "", 404],
    ["an unknown field", "digits", { parameters: { file: "x" } }, 400],
    ["a malformed version", "digits", { parameters: { version: "../1" } }, 400],
    ["a non-JSON body", "digits", "version=2", 400],
  ])("%s: %s", async (_, model, body, status) => {
    const res = await load(model, body);
    expect(res.status).toBe(status);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await servedVersion()).toBe("1");
  });
});

describe("shutdown during a load", () => {
  it("a load still running when the pool shuts down is discarded; nothing serves after close", async () => {
    await addVersion(models.dir, "digits", "2", { makeDefault: true });
    // SIGHUP's path: no HTTP request is open for the load, so nothing holds the shutdown back until it ends.
    const reloading = server.reload();
    const digitsLoading = () => server.repository.index().some((e) => e.name === "digits" && e.state === "LOADING");
    while (!digitsLoading()) await new Promise((r) => setImmediate(r));
    await server.shutdown();

    const digits = (await reloading)[2];
    expect(digits).toMatchObject({ status: "rejected", reason: { code: "load_failed" } });
    expect((digits as PromiseRejectedResult).reason.message).toBe(
      'loading model "digits" version 2 was discarded: the pool is shutting down',
    );
    // Nothing serves after close(): a version swapped in now would hold its session forever.
    expect(server.repository.index()).toEqual(
      ["breast-cancer", "breast-cancer-edge", "digits", "digits-edge"].map((name) => ({
        name,
        state: "UNAVAILABLE",
        reason: "unloaded",
      })),
    );
    expect(server.logs.find((l) => l.msg === "model load discarded" && l.model === "digits")).toMatchObject({
      version: "2",
    });
    await expect(server.repository.load("digits")).rejects.toMatchObject({ status: 503 });
  });
});
