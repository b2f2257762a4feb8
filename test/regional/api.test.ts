import { connect } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { argmax } from "../../protocol/heldout.ts";
import { heldout } from "../support/heldout.ts";
import {
  classifyRows,
  get,
  post,
  serverForFile,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const server = serverForFile(testOptions(["--region", "eu"]));

describe("server and model metadata (Open Inference Protocol v2)", () => {
  it("GET /v2 names the server, its extensions, region and execution provider", async () => {
    const res = await get(`${server.url}/v2`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: "edgecascade-regional",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      extensions: ["model_repository", "binary_tensor_data", "model_configuration", "statistics"],
      region: "eu",
      executionProvider: expect.stringMatching(/^(cpu|cuda)$/),
      modelSignatures: { required: false },
      // Two samples and their edge variants fit the default budget: auto loads them all.
      modelLoading: { policy: "all", available: 4, loaded: 4 },
    });
  });

  it("live and ready answer 200 with their JSON bodies", async () => {
    expect(await get(`${server.url}/v2/health/live`)).toMatchObject({ status: 200, body: { live: true } });
    expect(await get(`${server.url}/v2/health/ready`)).toMatchObject({ status: 200, body: { ready: true } });
  });

  it.each(["/v2/models/digits", "/v2/models/digits/versions/1"])("%s: tensors with -1 for the batch", async (path) => {
    expect((await get(`${server.url}${path}`)).body).toEqual({
      name: "digits",
      versions: ["1"],
      platform: "onnxruntime_onnx",
      inputs: [{ name: "pixels", datatype: "FP32", shape: [-1, 64] }],
      outputs: [{ name: "probabilities", datatype: "FP32", shape: [-1, 10] }],
      labels: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    });
  });

  it("describes the tree model from its config: 30 named features, 2 labels", async () => {
    expect((await get(`${server.url}/v2/models/breast-cancer`)).body).toMatchObject({
      name: "breast-cancer",
      versions: ["1"],
      inputs: [{ name: "features", datatype: "FP32", shape: [-1, 30] }],
      outputs: [{ name: "probabilities", datatype: "FP32", shape: [-1, 2] }],
      labels: ["malignant", "benign"],
      features: expect.arrayContaining(["mean_radius", "worst_fractal_dimension"]),
    });
  });

  it("serves every model in the repository, digits-edge included", async () => {
    expect(await get(`${server.url}/v2/models/digits-edge/ready`)).toMatchObject({
      status: 200,
      body: { name: "digits-edge", ready: true },
    });
    expect(await get(`${server.url}/v2/models/digits/versions/1/ready`)).toMatchObject({ status: 200 });
  });

  it("a version that is not served: ready 503, metadata and inference 404", async () => {
    expect((await get(`${server.url}/v2/models/digits/versions/7/ready`)).status).toBe(503);
    expect(await get(`${server.url}/v2/models/digits/versions/7`)).toMatchObject({
      status: 404,
      body: { code: "not_found", error: 'model "digits" version 7 is not served; version 1 is' },
    });
    const res = await post(`${server.url}/v1/classify`, { ...classifyRows(0), version: "7" });
    expect(res.status).toBe(404);
  });

  it("an unknown model is a 404 everywhere", async () => {
    for (const res of [
      await get(`${server.url}/v2/models/nope`),
      await get(`${server.url}/v2/models/nope/ready`),
      await post(`${server.url}/v1/classify`, { model: "nope", inputs: heldout.rows[0]!.input }),
    ]) {
      expect(res).toMatchObject({
        status: 404,
        body: {
          code: "not_found",
          error:
            'unknown model "nope"; this pool serves "breast-cancer", "breast-cancer-edge", "digits", "digits-edge"',
        },
      });
    }
  });
});

describe("/v1/classify", () => {
  it("answers one row like the fixture, with servedBy, id and the three headers", async () => {
    const res = await post(`${server.url}/v1/classify`, { ...classifyRows(3), id: "req-3" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ model: "digits", version: "1", id: "req-3", servedBy: "regional:eu" });
    expect(res.body.predictions).toHaveLength(1);
    const [p] = res.body.predictions;
    expect(p.class).toBe(argmax(heldout.rows[3]!.expected.digits!));
    expect(p.label).toBe(String(p.class));
    expect(p.confidence).toBe(Math.max(...p.scores));
    expect(worstDifference(res.body.predictions, 3)).toBeLessThanOrEqual(TOLERANCE);
    expect(res.headers["x-served-by"]).toBe("regional:eu");
    expect(res.headers["x-model-version"]).toBe("1");
    expect(res.headers["server-timing"]).toMatch(
      /queue;dur=[\d.]+.*compute;dur=[\d.]+;desc="batch of \d+".*total;dur=/,
    );
  });

  it("answers a batch of rows in order", async () => {
    const res = await post(`${server.url}/v1/classify`, classifyRows(10, 5));
    expect(res.status).toBe(200);
    expect(res.body.predictions).toHaveLength(5);
    expect(worstDifference(res.body.predictions, 10)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("accepts and ignores parameters.cascade; refuses an unknown mode", async () => {
    const ok = await post(`${server.url}/v1/classify`, { ...classifyRows(0), parameters: { cascade: "regional" } });
    expect(ok).toMatchObject({ status: 200, body: { servedBy: "regional:eu" } });
    const bad = await post(`${server.url}/v1/classify`, { ...classifyRows(0), parameters: { cascade: "moon" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('"parameters.cascade" must be one of');
  });

  it("serves digits-edge too, at the int8-safe optimisation level (matches the fixture)", async () => {
    const res = await post(`${server.url}/v1/classify`, { model: "digits-edge", inputs: heldout.rows[5]!.input });
    expect(res.status).toBe(200);
    const expected = heldout.rows[5]!.expected["digits-edge"]!;
    res.body.predictions[0].scores.forEach((s: number, c: number) => {
      expect(Math.abs(s - expected[c]!)).toBeLessThanOrEqual(TOLERANCE);
    });
  });
});

describe("v2 infer", () => {
  const rows = heldout.rows.slice(20, 23).map((r) => r.input);

  it.each([
    ["flat", rows.flat()],
    ["nested", rows],
  ])("%s data, id echoed, outputs like the fixture", async (_, data) => {
    const res = await post(`${server.url}/v2/models/digits/infer`, {
      id: "abc",
      inputs: [{ name: "pixels", shape: [3, 64], datatype: "FP32", data }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ model_name: "digits", model_version: "1", id: "abc" });
    const [out] = res.body.outputs;
    expect(out).toMatchObject({ name: "probabilities", shape: [3, 10], datatype: "FP32" });
    const predictions = [0, 1, 2].map((r) => ({ scores: out.data.slice(r * 10, r * 10 + 10) }));
    expect(worstDifference(predictions, 20)).toBeLessThanOrEqual(TOLERANCE);
    expect(res.headers["x-served-by"]).toBe("regional:eu");
  });

  it("the versioned path pins the version; no id means none echoed", async () => {
    const res = await post(`${server.url}/v2/models/digits/versions/1/infer`, {
      inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: rows[0] }],
      outputs: [{ name: "probabilities" }],
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("id");
    expect(res.body.model_version).toBe("1");
  });
});

describe("body size", () => {
  const big = JSON.stringify({ model: "digits", inputs: Array.from({ length: 300 * 1024 }, () => 1) });

  it("a body over 256 KiB is a 413, with a Content-Length; the connection closes (the body was not read)", async () => {
    expect(await post(`${server.url}/v1/classify`, big)).toMatchObject({
      status: 413,
      headers: { connection: "close" },
      body: { code: "payload_too_large", error: "request body exceeds 262144 bytes" },
    });
  });

  it("more rows than the limit is a 413 that keeps the connection (the body was read)", async () => {
    const rows = Array.from({ length: 65 }, (_, i) => heldout.rows[i]!.input);
    expect(await post(`${server.url}/v1/classify`, { model: "digits", inputs: rows })).toMatchObject({
      status: 413,
      headers: { connection: "keep-alive" },
      body: { code: "payload_too_large", error: "batch of 65 rows exceeds the limit of 64" },
    });
  });

  it("a body over 256 KiB is a 413, chunked (no Content-Length)", async () => {
    const res = await request(`${server.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Readable.from([big.slice(0, 200_000), big.slice(200_000)]),
    });
    expect(res.statusCode).toBe(413);
    expect(await res.body.json()).toMatchObject({ code: "payload_too_large" });
  });

  // A client still sending when the 413 comes must be able to read it: the pool reads and drops the rest of the
  // body (up to a bound, regional/refused-body.ts) before it closes, instead of resetting the connection.
  const MB20 = 20 * 1024 * 1024;
  for (const framing of ["content-length", "chunked"] as const) {
    const layer = framing === "content-length" ? "the fast path" : "Hono";
    it(`20 MB sent with undici (${framing}, ${layer}): the 413 is read`, async () => {
      const bytes = Buffer.alloc(MB20, 0x20);
      const res = await request(`${server.url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: framing === "chunked" ? Readable.from([bytes.subarray(0, MB20 / 2), bytes.subarray(MB20 / 2)]) : bytes,
      });
      expect(res.statusCode).toBe(413);
      expect(await res.body.json()).toEqual({ code: "payload_too_large", error: "request body exceeds 262144 bytes" });
    });

    it(`20 MB sent on a raw socket (${framing}, ${layer}): every byte is taken, then the 413, then a clean close`, async () => {
      const { sent, answer, reset } = await rawPost(server.port, "/v1/classify", MB20, framing);
      expect({ sent, reset }).toEqual({ sent: true, reset: undefined });
      expect(answer).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
        code: "payload_too_large",
        error: "request body exceeds 262144 bytes",
      });
    });
  }

  it("a chunked body under the limit is read", async () => {
    const res = await request(`${server.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Readable.from([JSON.stringify(classifyRows(2))]),
    });
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { predictions: { scores: number[] }[] };
    expect(worstDifference(body.predictions, 2)).toBeLessThanOrEqual(TOLERANCE);
  });
});

describe("routing errors", () => {
  it("a wrong method is a 405 with Allow", async () => {
    const res = await get(`${server.url}/v1/classify`);
    expect(res).toMatchObject({ status: 405, body: { code: "method_not_allowed" } });
    expect(res.headers.allow).toBe("POST");
    const ready = await post(`${server.url}/v2/health/ready`, {});
    expect(ready.status).toBe(405);
    expect(ready.headers.allow).toBe("GET, HEAD");
  });

  it("an unknown path is a JSON 404", async () => {
    expect(await get(`${server.url}/v3/anything`)).toMatchObject({
      status: 404,
      body: { error: "no route for GET /v3/anything", code: "not_found" },
    });
  });
});

/**
 * POST `bytes` bytes of spaces on a plain socket, as a client that writes its whole body before it reads: whether
 * every byte was taken, everything the pool answered, and the error (a reset) if the connection did not end cleanly.
 */
function rawPost(
  port: number,
  path: string,
  bytes: number,
  framing: "content-length" | "chunked",
): Promise<{ sent: boolean; answer: string; reset: string | undefined }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    let sent = false;
    let reset: string | undefined;
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      answer += d;
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      reset = err.code ?? err.message;
    });
    socket.on("close", () => resolve({ sent, answer, reset }));
    const length = framing === "chunked" ? "transfer-encoding: chunked" : `content-length: ${bytes}`;
    socket.write(`POST ${path} HTTP/1.1\r\nhost: pool\r\ncontent-type: application/json\r\n${length}\r\n\r\n`);
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const framed =
      framing === "chunked"
        ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")])
        : piece;
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        left -= piece.length;
        if (!socket.write(framed)) {
          socket.once("drain", pump);
          return;
        }
      }
      socket.write(framing === "chunked" ? "0\r\n\r\n" : "", () => {
        sent = true;
      });
    };
    pump();
  });
}
