import { gunzipSync, gzipSync, inflateSync } from "node:zlib";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { float32FromBytes } from "../../protocol/binary-tensor.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import {
  type ClientRequest,
  everyClientRequest,
  kserveRest,
  plainJson,
  type Tensor,
  tritonJson,
} from "../support/client-requests.ts";
import { confidentRows, NO_HEDGES, regionsVar, US_EAST, unsureRows } from "./support.ts";

/**
 * The edge with one real pool behind it, reached on the Worker's own socket (Miniflare's entry Worker in front,
 * which compresses answers as Cloudflare does), with each client's exact bytes (test/support/client-requests.ts)
 * and an HTTP client that decodes nothing, as tritonclient's asyncio client (aiohttp, auto_decompress=False).
 */
let pool: RegionalPool;
let worker: EdgeWorker;
beforeAll(async () => {
  pool = await startRegionalPool({ region: "us" });
  const REGIONS = regionsVar([{ name: "us", url: pool.url, at: US_EAST }]);
  worker = await startEdgeWorker({ vars: { REGIONS, SLO_BUDGET_MS: "20000", ...NO_HEDGES } });
});
afterAll(async () => {
  await worker?.dispose();
  await pool?.stop();
});

/** Aiohttp's headers on every call of tritonclient's asyncio client. */
const AIOHTTP = { Accept: "*/*", "Accept-Encoding": "gzip, deflate", "User-Agent": "Python/3.12 aiohttp/3.10.10" };

interface Raw {
  status: number;
  headers: Record<string, string>;
  bytes: Uint8Array;
}
async function send(method: "GET" | "POST", path: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await request(`${worker.url}${path}`, { method, headers, body });
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = String(v);
  return { status: res.statusCode, headers: flat, bytes: new Uint8Array(await res.body.arrayBuffer()) } as Raw;
}
/** JSON straight from the bytes, as tritonclient's asyncio client reads every answer but an infer one. */
const rawJson = (r: Raw) => JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(r.bytes));

/** An infer answer as tritonclient reads it: decompressed by its Content-Encoding, split at the JSON length. */
function inferAnswer(r: Raw): { json: { [k: string]: unknown; outputs: { data?: number[] }[] }; values: number[] } {
  const coding = r.headers["content-encoding"];
  const bytes = coding === "gzip" ? gunzipSync(r.bytes) : coding === "deflate" ? inflateSync(r.bytes) : r.bytes;
  const length = r.headers["inference-header-content-length"];
  const n = length === undefined ? bytes.length : Number(length);
  const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, n)));
  const values = length === undefined ? json.outputs[0].data : Array.from(float32FromBytes(bytes.subarray(n)));
  return { json, values };
}

const tensor = (rows: typeof unsureRows): Tensor => ({
  input: "pixels",
  output: "probabilities",
  rows: rows.map((r) => r.input),
});
const worst = (got: number[], want: number[]) => Math.max(...got.map((g, i) => Math.abs(g - want[i]!)));

describe.each([
  ["forwarded to the pool", unsureRows.slice(0, 3)],
  ["answered at the edge", confidentRows.slice(0, 3)],
])("each client's exact bytes at the edge, rows %s", (_, rows) => {
  it("200 with the plain JSON request's answer; compressed only when asked, as Triton does", async () => {
    const t = tensor(rows);
    const plainRequest = plainJson(t);
    const plain = inferAnswer(await send("POST", "/v2/models/digits/infer", plainRequest.headers, plainRequest.body));
    for (const r of everyClientRequest(t, "digits")) {
      const raw = await send("POST", "/v2/models/digits/infer", r.headers, r.body);
      expect([r.name, raw.status]).toEqual([r.name, 200]);
      // aiohttp and httpx ask for gzip, deflate: Triton (and the edge) gzips the infer answer, which both clients
      // decode (tritonclient's InferResult by Content-Encoding, httpx itself).
      const asked = Object.keys(r.headers).some((k) => k.toLowerCase() === "accept-encoding");
      expect([r.name, raw.headers["content-encoding"]]).toEqual([r.name, asked ? "gzip" : undefined]);
      const answer = inferAnswer(raw);
      expect(answer.json).toMatchObject({ model_name: "digits", model_version: "1" });
      expect(worst(answer.values, plain.values), r.name).toBeLessThanOrEqual(1e-6);
    }
  });
});

describe("what tritonclient's asyncio client reads without decoding", () => {
  it.each([
    "/v2",
    "/v2/health/live",
    "/v2/health/ready",
    "/v2/models/digits",
    "/v2/models/digits/ready",
    "/v2/models/digits/config",
  ])("GET %s: plain JSON, Content-Encoding identity", async (path) => {
    const raw = await send("GET", path, AIOHTTP);
    expect(raw.status).toBe(200);
    expect(raw.headers["content-encoding"]).toBe("identity");
    expect(() => rawJson(raw)).not.toThrow();
  });

  it("an error answer too", async () => {
    const r = tritonJson(tensor(unsureRows.slice(0, 1)), "aio");
    const raw = await send("POST", "/v2/models/cats/infer", r.headers, r.body);
    expect(raw.status).toBe(404);
    expect(raw.headers["content-encoding"]).toBe("identity");
    expect(rawJson(raw).code).toBe("not_found");
  });

  it("deflate when that is what the client prefers", async () => {
    const r = tritonJson(tensor(confidentRows.slice(0, 1)), "aio");
    const raw = await send("POST", "/v2/models/digits/infer", { ...r.headers, "Accept-Encoding": "deflate" }, r.body);
    expect(raw.headers["content-encoding"]).toBe("deflate");
    expect(inferAnswer(raw).json.model_name).toBe("digits");
  });
});

describe("the edge's protocol surface", () => {
  it("/v2 lists the model configuration extension; statistics stay with the pools (501 saying where)", async () => {
    expect(rawJson(await send("GET", "/v2", {})).extensions).toEqual(["binary_tensor_data", "model_configuration"]);
    for (const path of ["/v2/models/stats", "/v2/models/digits/stats", "/v2/models/digits/versions/1/stats"]) {
      const raw = await send("GET", path, {});
      expect([path, raw.status, rawJson(raw).code]).toEqual([path, 501, "not_implemented"]);
      expect(rawJson(raw).error).toMatch(/GET \/v2\/models\/stats on a pool/);
    }
  });

  it("/v2/models/digits/config: config.json as Triton writes it, without dynamic batching (the pools batch)", async () => {
    const config = rawJson(await send("GET", "/v2/models/digits/config", {}));
    expect(config).toMatchObject({
      name: "digits",
      platform: "onnxruntime_onnx",
      max_batch_size: 64,
      input: [{ name: "pixels", data_type: "TYPE_FP32", dims: [64] }],
      output: [{ name: "probabilities", data_type: "TYPE_FP32", dims: [10] }],
    });
    expect(config).not.toHaveProperty("dynamic_batching");
    expect((await send("GET", "/v2/models/cats/config", {})).status).toBe(404);
  });

  it.each(["/v2/", "/v2/health/ready/", "/v2/models/digits/", "/v2/models/digits/ready/", "/v2/models/digits/config/"])(
    "%s answers as without the slash",
    async (path) => {
      const slash = await send("GET", path, {});
      expect(slash.status).toBe(200);
      expect(rawJson(slash)).toEqual(rawJson(await send("GET", path.slice(0, -1), {})));
    },
  );

  it("KServe's model_name naming another model, and an unknown coding, are refused clearly", async () => {
    const t = tensor(confidentRows.slice(0, 1));
    const k = kserveRest(t, "breast-cancer");
    const wrong = await send("POST", "/v2/models/digits/infer", k.headers, k.body);
    expect([wrong.status, rawJson(wrong).error]).toEqual([
      400,
      'the body\'s "model_name" is "breast-cancer" but the path names model "digits"',
    ]);
    const r: ClientRequest = tritonJson(t, "http");
    const br = await send("POST", "/v2/models/digits/infer", { ...r.headers, "Content-Encoding": "br" }, r.body);
    expect([br.status, br.headers["accept-encoding"], rawJson(br).code]).toEqual([
      415,
      "gzip, deflate",
      "unsupported_content_encoding",
    ]);
  });

  it("decompression bombs: 413 by the decoded size (DecompressionStream with a byte cap), then business as usual", async () => {
    const headers = { "content-type": "application/json", "content-encoding": "gzip" };
    const small = gzipSync(new Uint8Array(128 << 20)); // 128 MiB of zeros in 128 KB
    expect(small.length).toBeLessThan(256 * 1024);
    const decoded = await send("POST", "/v2/models/digits/infer", headers, small);
    expect([decoded.status, rawJson(decoded).error]).toEqual([
      413,
      "request body exceeds 262144 bytes once decompressed (content-encoding gzip)",
    ]);
    const big = new Uint8Array(small.length * 8); // 1 GiB of zeros as 8 gzip members, 1 MB on the wire
    for (let i = 0; i < 8; i++) big.set(small, i * small.length);
    expect((await send("POST", "/v2/models/digits/infer", headers, big)).status).toBe(413);
    const r = tritonJson(tensor(confidentRows.slice(0, 1)), "http", "gzip");
    expect((await send("POST", "/v2/models/digits/infer", r.headers, r.body)).status).toBe(200);
  });
});
