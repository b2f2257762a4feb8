import { describe, expect, it } from "vitest";
import { heldout } from "../support/heldout.ts";
import { get, post, serverForFile, testOptions } from "../support/regional-server.ts";

const server = serverForFile(testOptions(["--region", "eu", "--max-queue-delay-us", "250"]));

const infer = (rows: number, at = 0) =>
  post(`${server.url}/v2/models/digits/infer`, {
    inputs: [
      {
        name: "pixels",
        shape: [rows, 64],
        datatype: "FP32",
        data: heldout.rows.slice(at, at + rows).flatMap((r) => r.input),
      },
    ],
  });

describe("Triton's model configuration extension", () => {
  it("/v2 lists it and the statistics extension", async () => {
    expect((await get(`${server.url}/v2`)).body.extensions).toEqual([
      "model_repository",
      "binary_tensor_data",
      "model_configuration",
      "statistics",
    ]);
  });

  it.each(["/v2/models/digits/config", "/v2/models/digits/versions/1/config"])(
    "%s: config.json as Triton writes a model configuration, with this pool's batching",
    async (path) => {
      const { status, body } = await get(`${server.url}${path}`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        name: "digits",
        platform: "onnxruntime_onnx",
        max_batch_size: 64,
        input: [{ name: "pixels", data_type: "TYPE_FP32", dims: [64] }],
        output: [{ name: "probabilities", data_type: "TYPE_FP32", dims: [10] }],
        dynamic_batching: { max_queue_delay_microseconds: 250 },
        instance_group: [{ kind: "KIND_CPU", count: 1 }],
      });
    },
  );

  it("an unknown model or version is a 404 naming it", async () => {
    const unknown = await get(`${server.url}/v2/models/cats/config`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/cats/);
    expect((await get(`${server.url}/v2/models/digits/versions/9/config`)).status).toBe(404);
    expect((await get(`${server.url}/v2/models/cats/stats`)).status).toBe(404);
  });
});

describe("Triton's statistics extension", () => {
  it("counts this pool's requests, rows, executions and durations", async () => {
    const before = (await get(`${server.url}/v2/models/digits/stats`)).body.model_stats[0];
    const sentAt = Date.now();
    for (const rows of [1, 2, 4]) expect((await infer(rows)).status).toBe(200);
    expect((await infer(65)).status).toBe(413); // refused before the model: not a request of the model
    const { status, body } = await get(`${server.url}/v2/models/digits/stats`);
    expect(status).toBe(200);
    expect(body.model_stats).toHaveLength(1);
    const after = body.model_stats[0];
    expect(after).toMatchObject({ name: "digits", version: "1" });
    expect(after.inference_count - before.inference_count).toBe(7);
    const s = after.inference_stats;
    const b = before.inference_stats;
    expect(s.success.count - b.success.count).toBe(3);
    expect(s.success.ns - b.success.ns).toBeGreaterThan(0);
    expect(s.fail.count - b.fail.count).toBe(0);
    expect(s.queue.count - b.queue.count).toBe(3);
    expect(s.compute_infer.count - b.compute_infer.count).toBe(3);
    expect(s.compute_infer.ns - b.compute_infer.ns).toBeGreaterThan(0);
    // Sent one after another: each ran alone, one execution of its own size.
    expect(after.execution_count - before.execution_count).toBe(3);
    const executions = (stats: typeof after, size: number) =>
      stats.batch_stats.find((x: { batch_size: number }) => x.batch_size === size)?.compute_infer.count ?? 0;
    for (const size of [1, 2, 4]) expect(executions(after, size) - executions(before, size)).toBe(1);
    expect(after.last_inference).toBeGreaterThanOrEqual(sentAt);
    expect(after.last_inference).toBeLessThanOrEqual(Date.now());
  });

  it("/v2/models/stats lists every model; a version filters", async () => {
    const all = (await get(`${server.url}/v2/models/stats`)).body.model_stats;
    // Every model the pool serves, edge variants included, each at its serving version.
    const served = server.repository.index().map((e) => `${e.name}@${e.version}`);
    expect(all.map((s: { name: string; version: string }) => `${s.name}@${s.version}`)).toEqual(served);
    expect(served).toContain("digits@1");
    const one = (await get(`${server.url}/v2/models/digits/versions/1/stats`)).body.model_stats;
    expect(one.map((s: { name: string; version: string }) => `${s.name}@${s.version}`)).toEqual(["digits@1"]);
  });
});

describe("trailing slashes", () => {
  it.each([
    "/v2/",
    "/v2/health/live/",
    "/v2/health/ready/",
    "/v2/models/digits/",
    "/v2/models/digits/ready/",
    "/v2/models/digits/versions/1/",
    "/v2/models/digits/config/",
  ])("%s answers as without it", async (path) => {
    const slash = await get(`${server.url}${path}`);
    const plain = await get(`${server.url}${path.slice(0, -1)}`);
    expect(slash.status).toBe(200);
    expect(slash.body).toEqual(plain.body);
  });

  it("an infer POST with a trailing slash is answered (by the Hono route)", async () => {
    const answer = await post(`${server.url}/v2/models/digits/infer/`, {
      inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: heldout.rows[0]!.input }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.model_name).toBe("digits");
  });
});
