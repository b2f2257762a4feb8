import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcToken } from "../../regional/grpc/auth.ts";
import { binaryInferBody, postInfer } from "../support/binary-infer.ts";
import { fromRawFloat32, type GrpcTestClient, grpcClient, rawFloat32 } from "../support/grpc-client.ts";
import { heldout } from "../support/heldout.ts";
import { serverForFile, startTestServer, type TestServer, TOLERANCE, testOptions } from "../support/regional-server.ts";

// One pool serving gRPC on a free port, with HTTP beside it to compare answers with.
const server = serverForFile(testOptions(["--region", "eu", "--grpc-port", "0"]));
let client: GrpcTestClient;
beforeAll(async () => {
  client = grpcClient(server.grpcPort!);
});
afterAll(() => client?.close());

const rows = (from: number, n: number) => heldout.rows.slice(from, from + n).map((r) => r.input);
const expected = (from: number, n: number) => heldout.rows.slice(from, from + n).flatMap((r) => r.expected.digits!);
const worst = (got: number[], want: number[]) => Math.max(...got.map((g, i) => Math.abs(g - want[i]!)));
const rawRequest = (from: number, n: number, extra: object = {}) => ({
  model_name: "digits",
  inputs: [{ name: "pixels", datatype: "FP32", shape: [n, 64] }],
  raw_input_contents: [rawFloat32(rows(from, n).flat())],
  ...extra,
});

/** The same rows through HTTP JSON: the values the gRPC answer must equal. */
async function httpJson(from: number, n: number): Promise<number[]> {
  const res = await fetch(`${server.url}/v2/models/digits/infer`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ inputs: [{ name: "pixels", shape: [n, 64], datatype: "FP32", data: rows(from, n) }] }),
  });
  // JSON carries each float32 as the shortest decimal that reads back to it: read back to float32 to compare.
  return ((await res.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data.map(Math.fround);
}

describe("health and metadata", () => {
  it("ServerLive, ServerReady, ServerMetadata", async () => {
    expect(await client.call("ServerLive", {})).toMatchObject({ ok: true, value: { live: true } });
    expect(await client.call("ServerReady", {})).toMatchObject({ ok: true, value: { ready: true } });
    const http = (await (await fetch(`${server.url}/v2`)).json()) as { name: string; version: string };
    expect(await client.call("ServerMetadata", {})).toMatchObject({
      ok: true,
      value: { name: http.name, version: http.version, extensions: [] },
    });
  });

  it("ModelReady: a served model and version; an unknown model is NOT_FOUND", async () => {
    expect(await client.call("ModelReady", { name: "digits" })).toMatchObject({ ok: true, value: { ready: true } });
    expect(await client.call("ModelReady", { name: "digits", version: "1" })).toMatchObject({ value: { ready: true } });
    expect(await client.call("ModelReady", { name: "digits", version: "9" })).toMatchObject({
      value: { ready: false },
    });
    const unknown = await client.call("ModelReady", { name: "nope" });
    expect(unknown).toMatchObject({ ok: false, error: { code: status.NOT_FOUND } });
  });

  it("ModelMetadata says what GET /v2/models/{m} says", async () => {
    const http = (await (await fetch(`${server.url}/v2/models/digits`)).json()) as Record<string, unknown>;
    const answer = await client.call("ModelMetadata", { name: "digits" });
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.value).toEqual({
      name: http.name,
      versions: http.versions,
      platform: http.platform,
      inputs: http.inputs,
      outputs: http.outputs,
    });
    expect(answer.value.inputs).toEqual([{ name: "pixels", datatype: "FP32", shape: [-1, 64] }]);
  });

  it("grpc.health.v1 Check: SERVING for the server and the inference service; other services NOT_FOUND", async () => {
    const check = (service: string) => client.call("Check", { service }, { service: "health" });
    expect(await check("")).toMatchObject({ ok: true, value: { status: 1 } });
    expect(await check("inference.GRPCInferenceService")).toMatchObject({ ok: true, value: { status: 1 } });
    expect(await check("other.Service")).toMatchObject({ ok: false, error: { code: status.NOT_FOUND } });
    expect(await client.call("List", {}, { service: "health" })).toMatchObject({
      ok: true,
      value: { statuses: { "": { status: 1 }, "inference.GRPCInferenceService": { status: 1 } } },
    });
    const watch = await client.stream("Watch", { service: "" });
    expect(watch).toMatchObject({
      code: status.UNIMPLEMENTED,
      details: expect.stringMatching(/Check the health instead/),
    });
  });
});

describe("ModelInfer", () => {
  it("raw contents in and out: the FP32 values of the HTTP answers, to the bit", async () => {
    const answer = await client.call("ModelInfer", rawRequest(40, 3, { id: "g1" }));
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.value).toMatchObject({
      model_name: "digits",
      model_version: "1",
      id: "g1",
      outputs: [{ name: "probabilities", datatype: "FP32", shape: [3, 10] }],
    });
    const values = fromRawFloat32(answer.value.raw_output_contents[0]);
    expect(values).toEqual(await httpJson(40, 3));
    expect(worst(values, expected(40, 3))).toBeLessThanOrEqual(TOLERANCE);
    // HTTP binary answers the same bytes.
    const { body, headers } = binaryInferBody(rows(40, 3), { parameters: { binary_data_output: true } });
    expect((await postInfer(`${server.url}/v2/models/digits/infer`, body, headers)).values).toEqual(values);
    // The answer's headers as HTTP sends them, as initial metadata.
    expect(answer.metadata).toMatchObject({ "x-served-by": "regional:eu", "x-model-version": "1" });
    expect(answer.metadata["server-timing"]).toMatch(/compute;dur=/);
  });

  it("values in contents.fp32_contents (KServe's client without raw contents): the same answer", async () => {
    const answer = await client.call("ModelInfer", {
      model_name: "digits",
      model_version: "1",
      inputs: [{ name: "pixels", datatype: "FP32", shape: [2, 64], contents: { fp32_contents: rows(7, 2).flat() } }],
      outputs: [{ name: "probabilities" }],
    });
    expect(answer.ok).toBe(true);
    if (answer.ok) expect(fromRawFloat32(answer.value.raw_output_contents[0])).toEqual(await httpJson(7, 2));
  });

  it("a batch of 64 rows: 640 values, equal to HTTP's", async () => {
    const answer = await client.call("ModelInfer", rawRequest(100, 64));
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.value.outputs[0].shape).toEqual([64, 10]);
    const values = fromRawFloat32(answer.value.raw_output_contents[0]);
    expect(values).toHaveLength(640);
    expect(values).toEqual(await httpJson(100, 64));
  });

  it("concurrent calls go through the dynamic batcher and each gets its own rows back", async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => client.call("ModelInfer", rawRequest(i * 5, 1))),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.ok).toBe(true);
      if (answer.ok)
        expect(worst(fromRawFloat32(answer.value.raw_output_contents[0]), expected(i * 5, 1))).toBeLessThanOrEqual(
          TOLERANCE,
        );
    }
  });

  const pixels = { name: "pixels", datatype: "FP32", shape: [1, 64] };
  it.each([
    ["an unknown model", { ...rawRequest(0, 1), model_name: "nope" }, status.NOT_FOUND, /unknown model "nope"/],
    ["no model_name", { ...rawRequest(0, 1), model_name: "" }, status.INVALID_ARGUMENT, /"model_name" is required/],
    ["a version not served", { ...rawRequest(0, 1), model_version: "9" }, status.NOT_FOUND, /version 9 is not served/],
    [
      "an unknown input",
      { model_name: "digits", inputs: [{ ...pixels, name: "x" }], raw_input_contents: [rawFloat32(rows(0, 1).flat())] },
      status.INVALID_ARGUMENT,
      /unknown input "x"; model "digits" has input "pixels"/,
    ],
    [
      "a wrong datatype",
      {
        model_name: "digits",
        inputs: [{ ...pixels, datatype: "FP64", contents: { fp64_contents: rows(0, 1).flat() } }],
      },
      status.INVALID_ARGUMENT,
      /datatype FP64; model "digits" expects FP32/,
    ],
    [
      "a wrong shape",
      { model_name: "digits", inputs: [{ ...pixels, shape: [1, 63] }], raw_input_contents: [new Uint8Array(252)] },
      status.INVALID_ARGUMENT,
      /shape \[1,63\]; model "digits" expects \[-1,64\]/,
    ],
    [
      "raw contents of the wrong size",
      { model_name: "digits", inputs: [pixels], raw_input_contents: [new Uint8Array(12)] },
      status.INVALID_ARGUMENT,
      /"raw_input_contents\[0\]" has 12 bytes; input "pixels" of shape \[1,64\] FP32 needs 256/,
    ],
    [
      "values in the wrong contents field",
      { model_name: "digits", inputs: [{ ...pixels, contents: { int_contents: new Array(64).fill(1) } }] },
      status.INVALID_ARGUMENT,
      /FP32 but its values are in "contents.int_contents"; FP32 goes in "contents.fp32_contents"/,
    ],
    [
      "a value that is not finite",
      {
        model_name: "digits",
        inputs: [pixels],
        raw_input_contents: [rawFloat32([Number.NaN, ...new Array(63).fill(0)])],
      },
      status.INVALID_ARGUMENT,
      /value 0 is not a finite number/,
    ],
    [
      "an unknown output",
      { ...rawRequest(0, 1), outputs: [{ name: "logits" }] },
      status.INVALID_ARGUMENT,
      /unknown output "logits"/,
    ],
    [
      "a batch over the limit (HTTP's 413)",
      rawRequest(0, 65),
      status.RESOURCE_EXHAUSTED,
      /batch of 65 rows exceeds the limit of 64/,
    ],
  ])("%s: the HTTP error's message and its gRPC status", async (_, request, code, message) => {
    const answer = await client.call("ModelInfer", request);
    expect(answer).toMatchObject({ ok: false, error: { code } });
    if (!answer.ok) expect(answer.error.details).toMatch(message);
  });

  it("a message over the body limit is RESOURCE_EXHAUSTED, as HTTP answers 413", async () => {
    const answer = await client.call("ModelInfer", {
      ...rawRequest(0, 1),
      raw_input_contents: [new Uint8Array(300 * 1024)],
    });
    expect(answer).toMatchObject({ ok: false, error: { code: status.RESOURCE_EXHAUSTED } });
  });

  it("the error's code travels in the edgecascade-error-code trailer", async () => {
    const answer = await client.call("ModelInfer", rawRequest(0, 65));
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(answer.error.metadata.get("edgecascade-error-code")).toEqual(["payload_too_large"]);
  });

  it("methods not served answer UNIMPLEMENTED with a message", async () => {
    const load = await client.call("RepositoryModelLoad", { model_name: "digits" });
    expect(load).toMatchObject({ ok: false, error: { code: status.UNIMPLEMENTED } });
    if (!load.ok) expect(load.error.details).toMatch(/model control is served over HTTP only/);
    // Triton's extras (tritonclient's get_model_config) are not in the .proto at all.
    const config = await client.callUndeclared("/inference.GRPCInferenceService/ModelConfig");
    expect(config).toMatchObject({ ok: false, error: { code: status.UNIMPLEMENTED } });
  });

  it("/metrics counts gRPC answers by method and code, and their inferences with HTTP's", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/edgecascade_grpc_responses_total\{method="ModelInfer",code="OK"\} [1-9]/);
    expect(text).toMatch(/edgecascade_grpc_responses_total\{method="ModelInfer",code="INVALID_ARGUMENT"\} [1-9]/);
    expect(text).toMatch(/edgecascade_grpc_responses_total\{method="Check",code="OK"\} [1-9]/);
  });
});

describe("auth, deadline and drain", () => {
  // Every inference waits 300 ms first (--delay-ms), long enough for a deadline to pass and a drain to wait on.
  const SECRET = "grpc-s3cret";
  let secured: TestServer;
  let secure: GrpcTestClient;
  beforeAll(async () => {
    secured = await startTestServer(
      testOptions(["--grpc-port", "0", "--delay-ms", "300", "--shutdown-delay-ms", "200"], {
        REGIONAL_SHARED_SECRET: SECRET,
        ADMIN_TOKEN: "grpc-admin",
      }),
    );
    secure = grpcClient(secured.grpcPort!);
  });
  afterAll(async () => {
    secure?.close();
    await secured?.shutdown();
  });
  const bearer = (token: string) => ({ metadata: { authorization: `Bearer ${token}` } });

  it("with a shared secret, ModelInfer needs the gRPC token; health and metadata stay open", async () => {
    const none = await secure.call("ModelInfer", rawRequest(0, 1));
    expect(none).toMatchObject({ ok: false, error: { code: status.UNAUTHENTICATED } });
    const secretItself = await secure.call("ModelInfer", rawRequest(0, 1), bearer(SECRET));
    expect(secretItself).toMatchObject({ ok: false, error: { code: status.UNAUTHENTICATED } });
    const good = await secure.call("ModelInfer", rawRequest(0, 1), bearer(grpcToken(SECRET)));
    expect(good.ok).toBe(true);
    expect(await secure.call("ModelMetadata", { name: "digits" })).toMatchObject({ ok: true });
    expect(await secure.call("ServerReady", {})).toMatchObject({ ok: true, value: { ready: true } });
  });

  it("the call's deadline is the request's: past it, DEADLINE_EXCEEDED and the pool counts it expired", async () => {
    const answer = await secure.call("ModelInfer", rawRequest(0, 1), { ...bearer(grpcToken(SECRET)), deadlineMs: 100 });
    expect(answer).toMatchObject({ ok: false, error: { code: status.DEADLINE_EXCEEDED } });
    // The pool's side: the batcher refused the expired rows (the same path as an HTTP deadline header).
    let text = "";
    for (let i = 0; i < 50 && !/outcome="expired"\} [1-9]/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await (await fetch(`${secured.url}/metrics`)).text();
    }
    expect(text).toMatch(/edgecascade_inference_requests_total\{model="digits",version="1",outcome="expired"\} 1/);
    expect(text).toMatch(/edgecascade_grpc_responses_total\{method="ModelInfer",code="DEADLINE_EXCEEDED"\} 1/);
  });

  it("a model that is not loaded is UNAVAILABLE, as HTTP answers 503", async () => {
    const unload = await fetch(`${secured.url}/v2/repository/models/breast-cancer/unload`, {
      method: "POST",
      headers: { authorization: "Bearer grpc-admin" },
    });
    expect(unload.status).toBe(200);
    const answer = await secure.call(
      "ModelInfer",
      {
        model_name: "breast-cancer",
        inputs: [{ name: "features", datatype: "FP32", shape: [1, 30] }],
        raw_input_contents: [new Uint8Array(120)],
      },
      bearer(grpcToken(SECRET)),
    );
    expect(answer).toMatchObject({ ok: false, error: { code: status.UNAVAILABLE } });
    if (!answer.ok) expect(answer.error.metadata.get("edgecascade-error-code")).toEqual(["model_not_ready"]);
    expect(await secure.call("ModelReady", { name: "breast-cancer" })).toMatchObject({ value: { ready: false } });
  });

  it("shutdown: readiness turns false, the call in flight is answered, then the port closes", async () => {
    const inFlight = secure.call("ModelInfer", rawRequest(3, 2), bearer(grpcToken(SECRET)));
    // Shut down once the pool holds the call (it counts it pending before its 300 ms wait).
    const pending = /edgecascade_inference_pending_requests\{model="digits",version="1"\} 1/;
    for (let i = 0; i < 100 && !pending.test(await (await fetch(`${secured.url}/metrics`)).text()); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const stopped = secured.shutdown();
    expect(await secure.call("ServerReady", {})).toMatchObject({ ok: true, value: { ready: false } });
    expect(await secure.call("Check", { service: "" }, { service: "health" })).toMatchObject({ value: { status: 2 } });
    const answer = await inFlight;
    expect(answer.ok).toBe(true);
    if (answer.ok)
      expect(worst(fromRawFloat32(answer.value.raw_output_contents[0]), expected(3, 2))).toBeLessThanOrEqual(TOLERANCE);
    await stopped;
    expect(await secure.call("ServerLive", {}, { deadlineMs: 2000 })).toMatchObject({
      ok: false,
      error: { code: status.UNAVAILABLE },
    });
  });
});
