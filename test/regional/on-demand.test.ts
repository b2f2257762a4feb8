import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { versionBytes } from "../../regional/memory-budget.ts";
import { repositoryOfCopies } from "../../scripts/stack/model-copies.ts";
import { heldoutOf, modelConfig } from "../support/heldout.ts";
import {
  get,
  type JsonBody,
  type LogEntry,
  metric,
  post,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";

// A repository of 8 copies of the samples (16 models with their edge variants), loaded on demand within a budget
// that holds the pinned digits-0000 and a few more (docs/regional.md, *Load policies and the memory budget*).
const digitsBytes = versionBytes(modelConfig("digits").versions["1"]!.bytes);
const cancerBytes = versionBytes(modelConfig("breast-cancer").versions["1"]!.bytes);
/** Room for the pinned digits copy and two more digits copies, not a third. */
const BUDGET_MB = Math.floor((3.5 * digitsBytes) / 2 ** 20);
const digitsRow = heldoutOf("digits").rows[0]!.input;
const cancerRow = heldoutOf("breast-cancer").rows[0]!.input;
const classify = (model: string, headers: Record<string, string> = {}) =>
  post(`${server.url}/v1/classify`, { model, inputs: model.startsWith("digits") ? digitsRow : cancerRow }, headers);
const metrics = async () => (await get(`${server.url}/metrics`)).body as string;
const admin = { authorization: "Bearer on-demand-admin" };
const index = async (): Promise<JsonBody[]> => (await post(`${server.url}/v2/repository/index`, {}, admin)).body;
const state = async (name: string) => (await index()).filter((e) => e.name === name).map((e) => e.state);
/** Log lines `msg` about `model` (load reports name it `name`, other lines `model`). */
const logged = (msg: string, model: string): LogEntry[] =>
  server.logs.filter((l) => l.msg === msg && (l.model ?? l.name) === model);

let copies: ReturnType<typeof repositoryOfCopies>;
let server: TestServer;
beforeAll(async () => {
  copies = repositoryOfCopies(8);
  // breast-cancer-0007's file is replaced by bytes that do not match its checksum: its loads fail.
  const broken = join(copies.dir, "breast-cancer-0007", "1", "model.onnx");
  rmSync(broken);
  writeFileSync(broken, "not the model config.json describes");
  server = await startTestServer(
    testOptions(
      [
        "--models",
        copies.dir,
        "--load-policy",
        "on-demand",
        "--pinned-models",
        "digits-0000",
        "--model-memory-mb",
        String(BUDGET_MB),
      ],
      { ADMIN_TOKEN: "on-demand-admin" },
    ),
  );
});
afterAll(async () => {
  await server?.shutdown();
  copies?.remove();
});

describe("a pool loading models on demand", () => {
  it("is ready with only its pinned model loaded, and says which models are available and which are loaded", async () => {
    const ready = await get(`${server.url}/v2/health/ready`);
    expect(ready).toMatchObject({ status: 200, body: { ready: true, models: { available: 16, loaded: 1 } } });
    expect(await state("digits-0000")).toEqual(["READY"]);
    expect((await index()).find((e) => e.name === "digits-0002")).toEqual({
      name: "digits-0002",
      state: "UNAVAILABLE",
      reason: "not loaded; loads on its first request",
    });
    // Metadata of a model not loaded comes from its config, without loading it.
    const meta = await get(`${server.url}/v2/models/breast-cancer-0003`);
    expect(meta).toMatchObject({ status: 200, body: { name: "breast-cancer-0003", versions: ["1"] } });
    expect(await state("breast-cancer-0003")).toEqual(["UNAVAILABLE"]);
    expect(metric(await metrics(), "edgecascade_model_memory_budget_bytes")).toBe(BUDGET_MB * 2 ** 20);
  });

  it("loads a model on its first request; concurrent first requests share that one load", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => classify("digits-0002")));
    for (const a of answers) expect(a).toMatchObject({ status: 200, body: { model: "digits-0002", version: "1" } });
    // Each says it waited for the load (the edge keeps such an answer's time out of its reach evidence); the next does not.
    for (const a of answers) expect(Number(a.headers["x-edgecascade-model-load-ms"])).toBeGreaterThan(0);
    expect((await classify("digits-0002")).headers["x-edgecascade-model-load-ms"]).toBeUndefined();
    const text = await metrics();
    expect(metric(text, "edgecascade_model_loads_total", { model: "digits-0002", outcome: "success" })).toBe(1);
    expect(metric(text, "edgecascade_model_load_duration_seconds_count", { trigger: "demand" })).toBe(1);
    expect(logged("model version serving", "digits-0002")).toHaveLength(1);
    expect(logged("model version serving", "digits-0002")[0]).toMatchObject({ trigger: "demand", bytes: digitsBytes });
  });

  it("evicts the least recently used model to make room, never past the budget, and loads it again when asked", async () => {
    const budget = BUDGET_MB * 2 ** 20;
    const resident = async () => metric(await metrics(), "edgecascade_model_resident_bytes");
    // digits-0002 is loaded (above); breast-cancer copies are small, then digits-0004 needs digits-0002's room.
    expect((await classify("breast-cancer-0001")).status).toBe(200);
    expect(await resident()).toBe(digitsBytes * 2 + cancerBytes);
    expect((await classify("digits-0002")).status).toBe(200); // digits-0002 is now more recent than breast-cancer-0001
    expect((await classify("digits-0004")).status).toBe(200);
    expect(await resident()).toBeLessThanOrEqual(budget);
    expect(logged("model evicted", "breast-cancer-0001")).toEqual([
      expect.objectContaining({
        level: "info",
        version: "1",
        bytes: cancerBytes,
        reason: expect.stringMatching(/^least recently used \(idle \d+ ms\); room for "digits-0004" \(1\.2 MB\)/),
      }),
    ]);
    expect(await state("breast-cancer-0001")).toEqual(["UNAVAILABLE"]);
    expect((await index()).find((e) => e.name === "breast-cancer-0001")?.reason).toMatch(
      /^evicted to fit the memory budget/,
    );
    expect(metric(await metrics(), "edgecascade_model_evictions_total", { model: "breast-cancer-0001" })).toBe(1);

    // Asked again, it loads again (evicting what is now least recently used); the pinned model is never evicted.
    expect((await classify("breast-cancer-0001")).status).toBe(200);
    expect((await classify("digits-0006")).status).toBe(200);
    expect(await resident()).toBeLessThanOrEqual(budget);
    expect(await state("digits-0000")).toEqual(["READY"]);
    expect(logged("model evicted", "digits-0000")).toEqual([]);
    expect(
      metric(await metrics(), "edgecascade_model_loads_total", { model: "breast-cancer-0001", outcome: "success" }),
    ).toBe(2);
    // GET /v2 says the same as /metrics of the budget, cheaply (/metrics' series grow with the models).
    const text = await metrics();
    const loading = (await get(`${server.url}/v2`)).body as { modelLoading: Record<string, unknown> };
    expect(loading.modelLoading).toEqual({
      policy: "on-demand",
      memoryBudgetBytes: budget,
      residentBytes: metric(text, "edgecascade_model_resident_bytes"),
      evictions: metric(text, "edgecascade_model_evictions_total"),
      available: 16,
      loaded: metric(text, "edgecascade_models_loaded"),
    });
  });

  it("answers a model that cannot load 503 with its reason, retried only after its backoff, the others unaffected", async () => {
    const failed = await classify("breast-cancer-0007");
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({
      code: "model_not_ready",
      error: expect.stringMatching(
        /^model "breast-cancer-0007" is not ready: loading model "breast-cancer-0007" version 1 failed: checksum mismatch/,
      ),
    });
    // Within the retry backoff, the same reason at once, without another load.
    const again = await classify("breast-cancer-0007");
    expect(again).toMatchObject({ status: 503, body: { code: "model_not_ready" } });
    expect(again.body.error).toMatch(/checksum mismatch/);
    expect(
      metric(await metrics(), "edgecascade_model_loads_total", { model: "breast-cancer-0007", outcome: "failure" }),
    ).toBe(1);
    expect((await classify("digits-0000")).status).toBe(200);
    expect((await get(`${server.url}/v2/health/ready`)).body).toMatchObject({
      ready: true,
      failed: [{ model: "breast-cancer-0007", reason: expect.stringMatching(/checksum mismatch/) }],
    });
  });

  it("a request that cannot wait as long as loads take answers 503 at once; the load goes on for the next", async () => {
    // Loads have run in this pool (above): a deadline of 0 ms is shorter than they take.
    const late = await classify("breast-cancer-0005", { "x-edgecascade-deadline-ms": "0" });
    expect(late).toMatchObject({ status: 503, body: { code: "model_not_ready" } });
    expect(late.body.error).toMatch(
      /^model "breast-cancer-0005" is loading on demand \(loads take about \d+ ms here, more than the 0 ms this request may wait\); retry shortly$/,
    );
    expect(late.headers["retry-after"]).toBe("1");
    expect((await classify("breast-cancer-0005")).status).toBe(200);
    expect(
      metric(await metrics(), "edgecascade_model_loads_total", { model: "breast-cancer-0005", outcome: "success" }),
    ).toBe(1);
  });

  it("an unloaded model is not loaded by requests until an explicit load, which pins it", async () => {
    expect((await post(`${server.url}/v2/repository/models/breast-cancer-0003/unload`, {}, admin)).status).toBe(200);
    expect(await classify("breast-cancer-0003")).toMatchObject({
      status: 503,
      body: { error: expect.stringMatching(/unloaded/) },
    });
    expect((await post(`${server.url}/v2/repository/models/breast-cancer-0003/load`, {}, admin)).status).toBe(200);
    expect(server.repository.versions("breast-cancer-0003").serving).toBeDefined();
    // Pinned by the explicit load: loads that need room evict others, never it.
    for (const name of ["digits-0002", "digits-0004", "digits-0006"]) expect((await classify(name)).status).toBe(200);
    expect(await state("breast-cancer-0003")).toEqual(["READY"]);
  });
});
