import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { status } from "@grpc/grpc-js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { driftOf, PSI_ALERT } from "../../protocol/drift.ts";
import { argmax } from "../../protocol/heldout.ts";
import { formatTraceParent } from "../../protocol/trace-context.ts";
import { wilson } from "../../protocol/wilson.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../scripts/otlp/receiver.ts";
import { type GrpcTestClient, grpcClient, rawFloat32 } from "../support/grpc-client.ts";
import { heldout } from "../support/heldout.ts";
import {
  counted,
  get,
  metric,
  post,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";

// One pool, HTTP and gRPC, tracing to a real OTLP/HTTP receiver in this process. Requests without a parent are
// sampled at ratio 0: only a caller's sampled context makes spans, so a span found here is one the test asked for.
let receiver: OtlpReceiver;
let server: TestServer;
let client: GrpcTestClient;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  server = await startTestServer(
    testOptions(["--region", "eu", "--grpc-port", "0"], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
      OTEL_SERVICE_NAME: "pool-eu",
    }),
  );
  client = grpcClient(server.grpcPort!);
});
afterAll(async () => {
  client?.close();
  await server?.shutdown();
  await receiver?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
/** A caller's context: a fresh trace id and span id, sampled or not. */
function callerContext(sampled = true) {
  const parent = { traceId: hex(16), parentId: hex(8), flags: sampled ? 1 : 0 };
  return { ...parent, traceparent: formatTraceParent(parent) };
}

/** The spans of `traceId` once the pool has exported them. */
async function exported(traceId: string): Promise<ReceivedSpan[]> {
  await server.tracing.flush();
  return receiver.trace(traceId);
}

const byName = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(found, `${name} in ${spans.map((s) => s.name).join(", ")}`).toHaveLength(1);
  return found[0]!;
};

/** The request span and its queue, batch and compute children, nested in time as they happened. */
function expectRequestSpans(spans: ReceivedSpan[], name: string, callerSpanId: string) {
  expect(spans).toHaveLength(4);
  const root = byName(spans, name);
  const queue = byName(spans, "queue");
  const batch = byName(spans, "batch");
  const compute = byName(spans, "compute");
  expect(root.parentSpanId).toBe(callerSpanId);
  expect(root.kind).toBe(2); // SERVER
  expect(queue.parentSpanId).toBe(root.spanId);
  expect(batch.parentSpanId).toBe(root.spanId);
  expect(compute.parentSpanId).toBe(batch.spanId);
  expect(root.attributes).toMatchObject({ "triton.model_name": "digits", "triton.model_version": "1" });
  expect(compute.attributes).toMatchObject({ "triton.model_name": "digits", "triton.model_version": "1" });
  expect(batch.attributes["edgecascade.batch.rows"]).toBeGreaterThanOrEqual(1);
  expect(batch.attributes["edgecascade.batch.requests"]).toBeGreaterThanOrEqual(1);
  expect(queue.startNs).toBeGreaterThanOrEqual(root.startNs);
  expect(queue.endNs).toBe(batch.startNs);
  expect(compute.startNs).toBeGreaterThanOrEqual(batch.startNs);
  expect(compute.endNs).toBeLessThanOrEqual(batch.endNs);
  expect(batch.endNs).toBeLessThanOrEqual(root.endNs);
  expect(root.resource).toMatchObject({ "service.name": "pool-eu", "edgecascade.region": "eu" });
  return { root, queue, batch, compute };
}

describe("tracing", () => {
  it("continues a sampled caller's trace: request, queue wait, batch and inference spans (fast path)", async () => {
    const caller = callerContext();
    const answer = await post(
      `${server.url}/v1/classify`,
      { model: "digits", inputs: heldout.rows[0]!.input, id: "req-7" },
      { traceparent: caller.traceparent, tracestate: "vendor=abc" },
    );
    expect(answer.status).toBe(200);
    const { root } = expectRequestSpans(await exported(caller.traceId), "POST /v1/classify", caller.parentId);
    expect(root.attributes).toMatchObject({
      "triton.request_id": "req-7",
      "http.route": "/v1/classify",
      "http.response.status_code": 200,
      "edgecascade.rows": 1,
    });
    expect(root.status.code).toBe(0);
    // The span thread's losses are series of the pool's own, at nothing lost here.
    const text = (await get(`${server.url}/metrics`)).body as string;
    expect(counted(text, "edgecascade_tracing_requests_dropped_total")).toBe(0);
    expect(counted(text, "edgecascade_tracing_export_failures_total")).toBe(0);
  });

  it("the Hono route (a chunked body the fast path declines) traces alike", async () => {
    const caller = callerContext();
    const body = JSON.stringify({ model: "digits", inputs: [heldout.rows[1]!.input, heldout.rows[2]!.input] });
    const res = await request(`${server.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: caller.traceparent },
      body: Readable.from([body]), // a stream: sent chunked, without Content-Length
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    const { root } = expectRequestSpans(await exported(caller.traceId), "POST /v1/classify", caller.parentId);
    expect(root.attributes["edgecascade.rows"]).toBe(2);
  });

  it("a parent marked unsampled produces no spans, and neither does a request without one (ratio 0)", async () => {
    const unsampled = callerContext(false);
    expect(
      (
        await post(
          `${server.url}/v1/classify`,
          { model: "digits", inputs: heldout.rows[3]!.input },
          {
            traceparent: unsampled.traceparent,
          },
        )
      ).status,
    ).toBe(200);
    const before = receiver.spans().length;
    expect((await post(`${server.url}/v1/classify`, { model: "digits", inputs: heldout.rows[4]!.input })).status).toBe(
      200,
    );
    expect(await exported(unsampled.traceId)).toEqual([]);
    expect(receiver.spans().length).toBe(before);
  });

  it("a failed request's span says why", async () => {
    const caller = callerContext();
    const answer = await post(
      `${server.url}/v1/classify`,
      { model: "digits", inputs: [1, 2, 3] },
      {
        traceparent: caller.traceparent,
      },
    );
    expect(answer.status).toBe(400);
    const spans = await exported(caller.traceId);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.status.code).toBe(2); // ERROR
    expect(spans[0]!.attributes).toMatchObject({ "error.type": "bad_request", "http.response.status_code": 400 });
  });

  it("gRPC: the context rides in the call's metadata", async () => {
    const caller = callerContext();
    const answer = await client.call(
      "ModelInfer",
      {
        model_name: "digits",
        id: "grpc-1",
        inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 64] }],
        raw_input_contents: [rawFloat32(heldout.rows[5]!.input)],
      },
      { metadata: { traceparent: caller.traceparent } },
    );
    expect(answer.ok).toBe(true);
    const { root } = expectRequestSpans(
      await exported(caller.traceId),
      "inference.GRPCInferenceService/ModelInfer",
      caller.parentId,
    );
    expect(root.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.method": "ModelInfer",
      "rpc.grpc.status_code": "OK",
      "triton.request_id": "grpc-1",
    });

    const failing = callerContext();
    const refused = await client.call(
      "ModelInfer",
      { model_name: "nope", inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 64] }], raw_input_contents: [] },
      { metadata: { traceparent: failing.traceparent } },
    );
    expect(refused).toMatchObject({ ok: false, error: { code: status.NOT_FOUND } });
    const [span] = await exported(failing.traceId);
    expect(span?.attributes).toMatchObject({ "rpc.grpc.status_code": "NOT_FOUND", "error.type": "not_found" });
  });
});

describe("the live audit at the pool", () => {
  it("counts agreement per row and keeps the call out of every request metric", async () => {
    const rows = heldout.rows.slice(10, 14);
    // The edge's labels: the full model's own for the first three rows, another class for the last.
    const labels = rows.map((r) => argmax(r.expected.digits!));
    labels[3] = (labels[3]! + 1) % 10;
    const before = (await get(`${server.url}/metrics`)).body as string;
    const answer = await post(
      `${server.url}/v1/classify`,
      { model: "digits", inputs: rows.map((r) => r.input) },
      { "x-edgecascade-audit": labels.join(",") },
    );
    expect(answer.status).toBe(200);
    const after = (await get(`${server.url}/metrics`)).body as string;
    // Counters read as 0 until their first count (counted); the histogram's series must be there (metric).
    const delta = (name: string, labelSet: Record<string, string>) =>
      name.endsWith("_total")
        ? counted(after, name, labelSet) - counted(before, name, labelSet)
        : metric(after, name, labelSet) - metric(before, name, labelSet);
    const digits = { model: "digits", version: "1" };
    expect(delta("edgecascade_cascade_audit_total", { ...digits, agree: "true" })).toBe(3);
    expect(delta("edgecascade_cascade_audit_total", { ...digits, agree: "false" })).toBe(1);
    expect(delta("edgecascade_inference_requests_total", digits)).toBe(0);
    expect(delta("edgecascade_inference_request_duration_seconds_count", digits)).toBe(0);
    expect(delta("edgecascade_predictions_total", digits)).toBe(0);
    expect(delta("edgecascade_http_responses_total", { route: "/v1/classify" })).toBe(0);

    const wrongCount = await post(
      `${server.url}/v1/classify`,
      { model: "digits", inputs: rows[0]!.input },
      { "x-edgecascade-audit": "1,2" },
    );
    expect(wrongCount.status).toBe(400);
    expect(wrongCount.body.error).toMatch(/x-edgecascade-audit must hold one class index/);
  });

  it("exports the agreement the edge variant had at import, and its Wilson lower bound", async () => {
    const text = (await get(`${server.url}/metrics`)).body as string;
    const edge = { model: "digits", edge_model: "digits-edge", edge_version: "1" };
    expect(metric(text, "edgecascade_cascade_import_agreement", edge)).toBe(1);
    expect(metric(text, "edgecascade_cascade_import_agreement_lower", edge)).toBeCloseTo(wilson(346, 346).lower, 9);
  });
});

describe("drift at the pool", () => {
  /** Live shares of `digits` version 1 over a stream, from /metrics before and after, as the recording rule takes them. */
  async function streamDrift(inputs: number[][]): Promise<ReturnType<typeof driftOf>> {
    const digits = { model: "digits", version: "1" };
    const before = (await get(`${server.url}/metrics`)).body as string;
    for (let i = 0; i < inputs.length; i += 32) {
      const answer = await post(`${server.url}/v1/classify`, { model: "digits", inputs: inputs.slice(i, i + 32) });
      expect(answer.status).toBe(200);
    }
    const after = (await get(`${server.url}/metrics`)).body as string;
    const classes = [...Array(10).keys()].map(String);
    const counts = classes.map(
      (c) =>
        counted(after, "edgecascade_predictions_total", { ...digits, class: c }) -
        counted(before, "edgecascade_predictions_total", { ...digits, class: c }),
    );
    const heldoutShares = classes.map((c) => metric(after, "edgecascade_heldout_class_share", { ...digits, class: c }));
    expect(heldoutShares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    return driftOf(counts, heldoutShares);
  }

  it("a stream of only two digit classes drifts past the threshold; the held-out mix does not", async () => {
    const twoClasses = heldout.rows.filter((r) => [0, 1].includes(argmax(r.expected.digits!))).map((r) => r.input);
    const skewed = await streamDrift([...twoClasses, ...twoClasses, ...twoClasses]);
    expect(skewed.predictions).toBe(3 * twoClasses.length);
    expect(skewed.psi).toBeGreaterThan(PSI_ALERT);
    const mix = await streamDrift(heldout.rows.map((r) => r.input));
    expect(mix.predictions).toBe(heldout.rows.length);
    expect(mix.psi).toBeLessThan(0.01);
    expect(mix.drifted).toBe(false);
  });

  it("keeps a confidence histogram per version", async () => {
    const text = (await get(`${server.url}/metrics`)).body as string;
    const digits = { model: "digits", version: "1" };
    const count = metric(text, "edgecascade_prediction_confidence_count", digits);
    expect(count).toBe(metric(text, "edgecascade_predictions_total", digits));
    expect(metric(text, "edgecascade_prediction_confidence_bucket", { ...digits, le: "0.2" })).toBe(0);
    expect(metric(text, "edgecascade_prediction_confidence_bucket", { ...digits, le: "1" })).toBe(count);
  });
});
