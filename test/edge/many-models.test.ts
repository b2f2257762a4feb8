import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax, edgeAnswers } from "../../protocol/heldout.ts";
import { calibrationOf } from "../../protocol/model-config.ts";
import type { InferResponse } from "../../protocol/types.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { edgeBundle } from "../../tools/edge-bundle/build-edge.ts";
import { readRepository } from "../../tools/edge-bundle/edge-models.ts";
import { heldoutOf, MODELS_DIR, modelConfig } from "../support/heldout.ts";
import { classify, getJson, NO_HEDGES, post, regionsVar, US_EAST, unsureRows, warmEdge } from "./support.ts";

const SYDNEY = { latitude: "-33.87", longitude: "151.21", continent: "OC", colo: "SYD" };

const SECRET = "many-models-secret";
const cancer = heldoutOf("breast-cancer");
const cancerLabels = modelConfig("breast-cancer").labels;
const cancerThreshold = calibrationOf(modelConfig("breast-cancer-edge")).threshold;

describe("the Worker bundle", () => {
  it("holds exactly the edge variants of the repository it was built from", async () => {
    const bundle = await edgeBundle();
    const onnx = bundle.modules.filter((m) => m.type === "Data" && m.path.endsWith(".onnx"));
    const variants = readRepository(MODELS_DIR).flatMap((m) => (m.edge ? [m.edge] : []));
    expect(onnx).toHaveLength(variants.length);
    // wrangler names each module by its content hash; the bundled files are the variants' served files.
    const { readFileSync } = await import("node:fs");
    const { createHash } = await import("node:crypto");
    const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(onnx.map((m) => digest(m.path)).sort()).toEqual(
      variants.map((v) => v.config.versions[v.config.version]!.sha256).sort(),
    );
  });
});

describe("two models at the edge and in a region", () => {
  let pool: RegionalPool;
  let worker: EdgeWorker;
  beforeAll(async () => {
    pool = await startRegionalPool({ region: "us", env: { REGIONAL_SHARED_SECRET: SECRET } });
    const REGIONS = regionsVar([{ name: "us", url: pool.url, at: US_EAST }]);
    worker = await warmEdge(
      await startEdgeWorker({
        vars: { REGIONS, REGIONAL_SHARED_SECRET: SECRET, SLO_BUDGET_MS: "20000", ...NO_HEDGES },
      }),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.stop();
  });

  it("answers the tree model's held-out rows through the cascade with the answering model's labels", async () => {
    let edge = 0;
    let regional = 0;
    for (const row of cancer.rows) {
      const answer = await post(worker, "/v1/classify", { model: "breast-cancer", inputs: row.input });
      expect(answer.status).toBe(200);
      const atEdge = edgeAnswers(row, cancerThreshold, "breast-cancer-edge");
      expect(answer.body.servedBy).toBe(atEdge ? "edge" : "regional:us");
      const expected = row.expected[atEdge ? "breast-cancer-edge" : "breast-cancer"]!;
      expect(answer.body.predictions[0]!.label).toBe(cancerLabels[argmax(expected)]);
      for (const [c, p] of expected.entries()) expect(answer.body.predictions[0]!.scores[c]).toBeCloseTo(p, 5);
      if (atEdge) edge++;
      else regional++;
    }
    expect(edge).toBeGreaterThan(0);
    expect(regional).toBeGreaterThan(0);
  });

  it("checks each model's rows against its own config: width and input name", async () => {
    const wrongWidth = await post(worker, "/v1/classify", { model: "breast-cancer", inputs: Array(64).fill(0) });
    expect(wrongWidth.status).toBe(400);
    expect(wrongWidth.body).toMatchObject({
      error: '"inputs" has 64 values; model "breast-cancer" expects rows of 30',
    });
    const v2 = await post<InferResponse>(worker, "/v2/models/breast-cancer/infer", {
      inputs: [{ name: "features", shape: [1, 30], datatype: "FP32", data: cancer.rows[0]!.input }],
    });
    expect(v2.status).toBe(200);
    expect(v2.body.outputs[0]).toMatchObject({ name: "probabilities", shape: [1, 2] });
    const pixels = await post(worker, "/v2/models/breast-cancer/infer", {
      inputs: [{ name: "pixels", shape: [1, 30], datatype: "FP32", data: cancer.rows[0]!.input }],
    });
    expect(pixels.body).toMatchObject({ error: 'unknown input "pixels"; model "breast-cancer" has input "features"' });
  });

  it("describes every model it serves, and 404s another naming them", async () => {
    expect((await getJson(worker, "/v2/models/breast-cancer")).body).toMatchObject({
      name: "breast-cancer",
      versions: ["1"],
      inputs: [{ name: "features", shape: [-1, 30] }],
      labels: ["malignant", "benign"],
    });
    const missing = await post(worker, "/v1/classify", { model: "digits-edge", inputs: [1] });
    expect(missing).toMatchObject({
      status: 404,
      body: { error: 'unknown model "digits-edge"; this endpoint serves "breast-cancer", "digits"' },
    });
    const index = await worker.dispatchFetch(`${worker.url}/v2/repository/index`, { method: "POST" });
    const entries = (await index.json()) as { name: string; version: string; labels: string[]; edge: unknown }[];
    expect(entries.map((e) => [e.name, e.version, e.labels.length])).toEqual([
      ["breast-cancer", "1", 2],
      ["digits", "1", 10],
    ]);
    expect(entries[0]!.edge).toEqual({ name: "breast-cancer-edge", version: "1", threshold: cancerThreshold });
  });
});

describe("a model without an edge variant", () => {
  let dir: string;
  let pool: RegionalPool;
  let worker: EdgeWorker;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgecascade-no-edge-"));
    cpSync(MODELS_DIR, dir, { recursive: true });
    rmSync(join(dir, "breast-cancer-edge"), { recursive: true });
    pool = await startRegionalPool({ region: "us", modelsDir: dir, env: { REGIONAL_SHARED_SECRET: SECRET } });
    const REGIONS = regionsVar([{ name: "us", url: pool.url, at: US_EAST }]);
    worker = await startEdgeWorker({
      modelsDir: dir,
      vars: { REGIONS, REGIONAL_SHARED_SECRET: SECRET, SLO_BUDGET_MS: "20000", ...NO_HEDGES },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is forwarded even where the estimate says the region is out of reach (never a 503 for an estimate)", async () => {
    // From Sydney the distance prior puts us about 210 ms away, beyond a client budget of 150 ms.
    // (First in this block: the isolate has no answers of its own from us yet, only the prior.)
    const init = { cf: SYDNEY, headers: { "x-edgecascade-budget-ms": "150" } };
    // A model with an edge variant answers such a request from the edge, at once (its model loaded first).
    expect((await classify(worker, [unsureRows[0]!], { cascade: "edge" })).status).toBe(200);
    const digits = await classify(worker, [unsureRows[0]!], undefined, init);
    expect(digits.body.servedBy).toBe("degraded");
    expect(digits.headers.get("x-edgecascade-degraded")).toBe("too-far");
    // One without is forwarded all the same, and answered.
    const row = cancer.rows[11]!;
    const answer = await post(worker, "/v1/classify", { model: "breast-cancer", inputs: row.input }, init);
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("regional:us");
    expect(answer.body.predictions[0]!.label).toBe(cancerLabels[argmax(row.expected["breast-cancer"]!)]);
  });

  it("is always forwarded, and the cache still applies", async () => {
    const rows = cancer.rows.slice(0, 10);
    for (const row of rows) {
      const answer = await post(worker, "/v1/classify", { model: "breast-cancer", inputs: row.input });
      expect(answer.body.servedBy).toBe("regional:us");
      expect(answer.body.predictions[0]!.label).toBe(cancerLabels[argmax(row.expected["breast-cancer"]!)]);
    }
    const again = await post(worker, "/v1/classify", { model: "breast-cancer", inputs: rows[0]!.input });
    expect(again.body.servedBy).toBe("cache");
  });

  it("refuses cascade 'edge' for it (400), and keeps the other model's edge variant", async () => {
    const forced = await post(worker, "/v1/classify", {
      model: "breast-cancer",
      inputs: cancer.rows[0]!.input,
      parameters: { cascade: "edge" },
    });
    expect(forced).toMatchObject({
      status: 400,
      body: { error: 'model "breast-cancer" has no edge variant; "cascade": "edge" is not available for it' },
    });
    const status = (await getJson<{ models: Record<string, { edge: unknown }> }>(worker, "/status")).body;
    expect(status.models["breast-cancer"]!.edge).toBeNull();
    expect(status.models.digits!.edge).toMatchObject({ name: "digits-edge" });
    expect((await getJson(worker, "/v2/models/breast-cancer/ready")).body).toEqual({
      name: "breast-cancer",
      ready: true,
    });
  });
});
