import { Response as MiniflareResponse } from "miniflare";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { float32FromBytes } from "../../protocol/binary-tensor.ts";
import { cacheKey } from "../../protocol/cache-key.ts";
import type { InferResponse } from "../../protocol/types.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { binaryInferBody } from "../support/binary-infer.ts";
import {
  classify,
  confidentRows,
  expectScores,
  getJson,
  post,
  serverTiming,
  TOLERANCE,
  unsureRows,
} from "./support.ts";

// Edge-only paths: no regions configured, so nothing here can be answered by a regional pool.
const NO_REGIONS = { REGIONS: "[]" };
/** Where the response cache keeps an answer in the Workers Cache API, by its key (edge/cache/response-cache.ts). */
const CACHE_URL = "https://cache.edgecascade.internal/answers/";

/** Wait until the Workers Cache API holds the answer of `key` (its write runs in waitUntil); fail if it never does. */
async function sharedHolds(worker: EdgeWorker, key: string): Promise<void> {
  const shared = (await worker.miniflare.getCaches()).default;
  await vi.waitFor(
    async () => expect(await shared.match(`${CACHE_URL}${key}`), `${key} in the Cache API`).toBeDefined(),
    {
      timeout: 20_000,
      interval: 20,
    },
  );
}

describe("edge inference in workerd", () => {
  let worker: EdgeWorker;
  beforeAll(async () => {
    worker = await startEdgeWorker({ vars: NO_REGIONS });
  });
  afterAll(() => worker?.dispose());

  it("loads the model once when the first requests arrive together", async () => {
    type Status = { models: Record<string, { edge: { loaded: boolean; loads: number } }> };
    const before = await getJson<Status>(worker, "/status");
    expect(before.body.models.digits!.edge).toMatchObject({ loaded: false, loads: 0 });
    const rows = confidentRows.slice(0, 16);
    const answers = await Promise.all(rows.map((row) => classify(worker, [row], { cascade: "edge" })));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expectScores(answer.body, [rows[i]!], "digits-edge");
    }
    const after = await getJson<Status>(worker, "/status");
    expect(after.body.models.digits!.edge).toMatchObject({ loaded: true, loads: 1 });
    // The other model's edge variant is loaded by its own first request, not by digits'.
    expect(after.body.models["breast-cancer"]!.edge).toMatchObject({ loaded: false, loads: 0 });
  });

  it("/v2/health/ready is 200 once the model is loaded", async () => {
    const ready = await getJson(worker, "/v2/health/ready");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true, sessions: { resident: 2, variants: 2 } });
    expect((await getJson(worker, "/v2/health/live")).body).toEqual({ live: true });
  });

  it("answers confident held-out rows itself, matching the digits-edge reference", async () => {
    const rows = confidentRows.slice(0, 40);
    const answer = await classify(worker, rows);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ model: "digits", version: "1", servedBy: "edge" });
    expect(answer.headers.get("x-served-by")).toBe("edge");
    expect(answer.headers.get("x-model-version")).toBe("1");
    expectScores(answer.body, rows, "digits-edge");
    expect(serverTiming(answer.headers)).toMatchObject({ cache: { desc: "miss" }, edge: { desc: "digits-edge v1" } });
  });

  it("answers every held-out row like the reference when forced to the edge, batches included", async () => {
    const rows = [...unsureRows, ...confidentRows.slice(40, 80)];
    for (let i = 0; i < rows.length; i += 32) {
      const batch = rows.slice(i, i + 32);
      const answer = await classify(worker, batch, { cascade: "edge" });
      expect(answer.body.servedBy).toBe("edge");
      expectScores(answer.body, batch, "digits-edge");
    }
  });

  it("accepts one row as a flat array and echoes the id", async () => {
    const row = confidentRows[0]!;
    const answer = await post(worker, "/v1/classify", { model: "digits", id: "req-7", inputs: row.input });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe("req-7");
    expectScores(answer.body, [row], "digits-edge");
  });

  it("serves the Open Inference Protocol v2", async () => {
    expect((await getJson(worker, "/v2")).body).toMatchObject({
      name: "edgecascade-edge",
      extensions: ["binary_tensor_data", "model_configuration"],
    });
    const meta = await getJson(worker, "/v2/models/digits");
    expect(meta.body).toEqual({
      name: "digits",
      versions: ["1"],
      platform: "onnxruntime_onnx",
      inputs: [{ name: "pixels", datatype: "FP32", shape: [-1, 64] }],
      outputs: [{ name: "probabilities", datatype: "FP32", shape: [-1, 10] }],
      labels: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    });
    expect((await getJson(worker, "/v2/models/digits/versions/1")).status).toBe(200);
    expect((await getJson(worker, "/v2/models/digits/ready")).body).toEqual({ name: "digits", ready: true });
    expect((await getJson(worker, "/v2/models/digits/versions/1/ready")).status).toBe(200);

    const rows = confidentRows.slice(80, 83);
    const infer = await post<InferResponse>(worker, "/v2/models/digits/infer", {
      id: "abc",
      inputs: [{ name: "pixels", shape: [3, 64], datatype: "FP32", data: rows.map((r) => r.input) }],
    });
    expect(infer.status).toBe(200);
    expect(infer.headers.get("x-served-by")).toBe("edge");
    expect(infer.body).toMatchObject({ model_name: "digits", model_version: "1", id: "abc" });
    const [output] = infer.body.outputs;
    expect(output).toMatchObject({ name: "probabilities", shape: [3, 10], datatype: "FP32" });
    const expected = rows.flatMap((r) => r.expected["digits-edge"]!);
    for (const [i, p] of expected.entries()) expect(Math.abs(output!.data![i]! - p)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("takes and gives binary tensor data (Triton's extension) on v2 infer", async () => {
    const rows = confidentRows.slice(90, 94);
    const { body, headers } = binaryInferBody(
      rows.map((r) => r.input),
      { parameters: { binary_data_output: true } },
    );
    const response = await worker.dispatchFetch(`${worker.url}/v2/models/digits/infer`, {
      method: "POST",
      headers,
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    const bytes = new Uint8Array(await response.arrayBuffer());
    const length = Number(response.headers.get("inference-header-content-length"));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, length)));
    expect(header.outputs).toEqual([
      { name: "probabilities", shape: [4, 10], datatype: "FP32", parameters: { binary_data_size: 160 } },
    ]);
    const values = float32FromBytes(bytes.subarray(length));
    const expected = rows.flatMap((r) => r.expected["digits-edge"]!);
    for (const [i, p] of expected.entries()) expect(Math.abs(values[i]! - p)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("writes each FP32 score as its shortest decimal: the float32 the binary answer carries", async () => {
    const rows = unsureRows.slice(0, 8).map((r) => r.input);
    const send = (path: string, body: string | Uint8Array, headers: Record<string, string>) =>
      worker.dispatchFetch(`${worker.url}${path}`, { method: "POST", headers, body });
    const binary = binaryInferBody(rows, { parameters: { binary_data_output: true } });
    const bytes = new Uint8Array(
      await (await send("/v2/models/digits/infer", binary.body, binary.headers)).arrayBuffer(),
    );
    const length = bytes.length - rows.length * 10 * 4;
    const values = float32FromBytes(bytes.subarray(length));
    const json = { "content-type": "application/json" };
    const inferText = await (
      await send(
        "/v2/models/digits/infer",
        JSON.stringify({ inputs: [{ name: "pixels", shape: [8, 64], datatype: "FP32", data: rows }] }),
        json,
      )
    ).text();
    const classifyText = await (
      await send(
        "/v1/classify",
        JSON.stringify({ model: "digits", inputs: rows, parameters: { cascade: "edge" } }),
        json,
      )
    ).text();
    const written = [
      ...[...inferText.matchAll(/"data":\[([^\]]*)\]/g)].flatMap((m) => m[1]!.split(",")),
      ...[...classifyText.matchAll(/"scores":\[([^\]]*)\]/g)].flatMap((m) => m[1]!.split(",")),
    ];
    expect(written).toHaveLength(160);
    expect(Float32Array.from(written.slice(0, 80).map(Number))).toEqual(values);
    expect(Float32Array.from(written.slice(80).map(Number))).toEqual(values);
    const significant = (t: string) =>
      t.replace(/e.*$/, "").replace(/[-.]/g, "").replace(/^0+/, "").replace(/0+$/, "").length;
    expect(Math.max(...written.map(significant))).toBeLessThanOrEqual(9);
  });
});

describe("response cache in workerd", () => {
  let worker: EdgeWorker;
  beforeAll(async () => {
    // One entry in the isolate's LRU, so the second answer pushes the first out to the Cache API tier.
    worker = await startEdgeWorker({ vars: { ...NO_REGIONS, CACHE_ENTRIES: "1" } });
  });
  afterAll(() => worker?.dispose());

  it("answers a repeat from the isolate's LRU, with the same predictions", async () => {
    const [row] = confidentRows;
    const first = await classify(worker, [row!]);
    const second = await classify(worker, [row!]);
    expect(first.body.servedBy).toBe("edge");
    expect(second.body.servedBy).toBe("cache");
    expect(second.headers.get("x-served-by")).toBe("cache");
    expect(serverTiming(second.headers).cache?.desc).toBe("hit-l1");
    expect(second.body.predictions).toEqual(first.body.predictions);
    expect(second.body.version).toBe("1");
  });

  it("finds an answer evicted from the LRU in the Workers Cache API", async () => {
    const [a, b] = confidentRows.slice(1, 3);
    expect((await classify(worker, [a!])).body.servedBy).toBe("edge");
    // The Cache API write runs in waitUntil: wait until it is there, read through Miniflare's own cache handle.
    const key = await cacheKey("digits", "1", Float32Array.from(a!.input));
    await sharedHolds(worker, key);
    expect((await classify(worker, [b!])).body.servedBy).toBe("edge"); // evicts a from the 1-entry LRU
    const again = await classify(worker, [a!]);
    expect(again.body.servedBy).toBe("cache");
    expect(serverTiming(again.headers).cache?.desc).toBe("hit-l2");
    expectScores(again.body, [a!], "digits-edge");
  });

  it("answers a hit, from either tier, in the bytes of the answer that filled it (servedBy aside)", async () => {
    const text = async (body: object) =>
      (
        await worker.dispatchFetch(`${worker.url}/v1/classify`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        })
      ).text();
    const cases = [
      { rows: confidentRows.slice(6, 7) },
      { rows: confidentRows.slice(7, 10), id: "r-1" },
      { rows: confidentRows.slice(10, 12), id: 'a "quoted" \\ id\n\u0001 é 😀 \ud800 </script>' },
    ];
    for (const { rows, id } of cases) {
      const body = { model: "digits", ...(id !== undefined ? { id } : {}), inputs: rows.map((r) => r.input) };
      const filled = await text(body);
      expect(JSON.parse(filled)).toMatchObject({ servedBy: "edge", ...(id !== undefined ? { id } : {}) });
      // What JSON.stringify writes: its field order and escapes, as the answer was written before.
      expect(JSON.stringify(JSON.parse(filled))).toBe(filled);
      const hit = filled.replace(/"servedBy":"edge"}$/, '"servedBy":"cache"}');
      expect(await text(body)).toBe(hit); // the isolate's tier (it holds one entry)
      await sharedHolds(worker, await cacheKey("digits", "1", Float32Array.from(rows.flatMap((r) => r.input))));
      await text({ model: "digits", inputs: [confidentRows[12]!.input] }); // pushes it out to the shared tier
      expect(await text(body)).toBe(hit);
    }
  });

  it("with LOCAL_CACHE_ONLY, keeps answers in the isolate and never reads or writes the Workers Cache API", async () => {
    const local = await startEdgeWorker({ vars: { ...NO_REGIONS, LOCAL_CACHE_ONLY: "true", CACHE_ENTRIES: "1" } });
    try {
      const [row, other] = [confidentRows[5]!, confidentRows[13]!];
      // An answer for `row` already in the Cache API, as another isolate would have left it, with scores no model
      // gives: a Worker that looked there would answer from it.
      const key = await cacheKey("digits", "1", Float32Array.from(row.input));
      const planted = { version: "1", probs: Array.from({ length: 10 }, (_, i) => (i === 0 ? 1 : 0)), expiresAt: 4e12 };
      await (await local.miniflare.getCaches()).default.put(
        `${CACHE_URL}${key}`,
        new MiniflareResponse(JSON.stringify(planted), { headers: { "cache-control": "max-age=600" } }),
      );
      const first = await classify(local, [row]);
      expect(first.body.servedBy).toBe("edge");
      expectScores(first.body, [row], "digits-edge");
      const repeat = await classify(local, [row]);
      expect(repeat.body.servedBy).toBe("cache");
      expect(serverTiming(repeat.headers).cache?.desc).toBe("hit-l1");
      // Pushed out of the one-entry isolate tier, `row` is a miss again: nothing of it was kept anywhere else.
      expect((await classify(local, [other])).body.servedBy).toBe("edge");
      expect(serverTiming((await classify(local, [row])).headers).cache?.desc).toBe("miss");
      // Every answer above would have begun a write, counted as it begins: none did.
      const status = await getJson<{ cache: { sharedWrites: Record<string, number> } }>(local, "/status");
      expect(status.body.cache.sharedWrites).toEqual({ started: 0, written: 0, failed: 0 });
    } finally {
      await local.dispose();
    }
  });

  it("keys on the float32 values, so 1 and 1.0 and nested or flat rows share an entry", async () => {
    const row = confidentRows[3]!;
    expect((await post(worker, "/v1/classify", { model: "digits", inputs: [row.input] })).body.servedBy).toBe("edge");
    const text = `{"model":"digits","inputs":[${row.input.map((x) => x.toFixed(1)).join(",")}]}`;
    expect((await post(worker, "/v1/classify", text)).body.servedBy).toBe("cache");
  });

  it("bypasses the cache for forced modes", async () => {
    const row = confidentRows[4]!;
    for (let i = 0; i < 2; i++) {
      const answer = await classify(worker, [row], { cascade: "edge" });
      expect(answer.body.servedBy).toBe("edge");
      expect(serverTiming(answer.headers).cache?.desc).toBe("bypass");
    }
  });

  it("never caches a degraded answer", async () => {
    const row = unsureRows[0]!;
    for (let i = 0; i < 2; i++) {
      const answer = await classify(worker, [row]);
      expect(answer.status).toBe(200);
      expect(answer.body.servedBy).toBe("degraded");
      expect(answer.headers.get("x-edgecascade-degraded")).toBe("no-regions");
      expectScores(answer.body, [row], "digits-edge");
    }
  });
});
