import { describe, expect, it } from "vitest";
import {
  AUDIT_HEADER,
  DEADLINE_HEADER,
  SIGNATURE_HEADER,
  TENANT_HEADER,
  TIMESTAMP_HEADER,
} from "../../protocol/headers.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { binaryInferBody, postInfer } from "../support/binary-infer.ts";
import {
  classifyRows,
  counted,
  get,
  metric,
  post,
  serverForFile,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const SECRET = "shared-secret-for-tests";
const server = serverForFile(testOptions([], { REGIONAL_SHARED_SECRET: SECRET }));

const body = JSON.stringify(classifyRows(4));
const signed = (path: string, text: string, nowMs?: number) =>
  signatureHeaders(SECRET, { method: "POST", path, body: text }, nowMs);

describe("edge signature on inference endpoints", () => {
  it("a correctly signed call is answered", async () => {
    const res = await post(`${server.url}/v1/classify`, body, {
      ...(await signed("/v1/classify", body)),
      [DEADLINE_HEADER]: "5000",
    });
    expect(res.status).toBe(200);
    expect(worstDifference(res.body.predictions, 4)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("covers the tenant: the signed tenant is answered and counted as its own, another tenant or none is a 401", async () => {
    const tenantCall = { method: "POST", path: "/v1/classify", body, tenant: "acme" };
    const headers = await signatureHeaders(SECRET, tenantCall);
    expect(headers[TENANT_HEADER]).toBe("acme");
    const before = counted((await get(`${server.url}/metrics`)).body, "edgecascade_tenant_requests_total", {
      tenant: "other",
      outcome: "success",
    });
    expect((await post(`${server.url}/v1/classify`, body, headers)).status).toBe(200);
    const after = (await get(`${server.url}/metrics`)).body;
    // acme is not in this pool's --tenants: it is counted under `other`.
    expect(metric(after, "edgecascade_tenant_requests_total", { tenant: "other", outcome: "success" })).toBe(
      before + 1,
    );
    const swapped = await post(`${server.url}/v1/classify`, body, { ...headers, [TENANT_HEADER]: "globex" });
    expect(swapped).toMatchObject({ status: 401, body: { error: expect.stringMatching(/signature does not match/) } });
    const { [TENANT_HEADER]: _, ...withoutTenant } = headers;
    expect((await post(`${server.url}/v1/classify`, body, withoutTenant)).status).toBe(401);
    const untenanted = await signed("/v1/classify", body);
    expect((await post(`${server.url}/v1/classify`, body, { ...untenanted, [TENANT_HEADER]: "acme" })).status).toBe(
      401,
    );
  });

  it("covers an audit's labels: the signed ones are counted, changed or added ones are a 401", async () => {
    // One row (classifyRows(4)): one label.
    const audit = await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body, audit: "0" });
    expect(audit[AUDIT_HEADER]).toBe("0");
    // A counter reads 0 until its first count (metric() throws on a series not there).
    const audited = async () =>
      counted((await get(`${server.url}/metrics`)).body, "edgecascade_cascade_audit_total", { model: "digits" });
    const before = await audited();
    expect((await post(`${server.url}/v1/classify`, body, audit)).status).toBe(200);
    expect(await audited()).toBe(before + 1);
    const changed = await post(`${server.url}/v1/classify`, body, { ...audit, [AUDIT_HEADER]: "3" });
    expect(changed).toMatchObject({ status: 401, body: { error: expect.stringMatching(/signature does not match/) } });
    const request = await signed("/v1/classify", body);
    expect((await post(`${server.url}/v1/classify`, body, { ...request, [AUDIT_HEADER]: "0" })).status).toBe(401);
  });

  it("signed v2 infer, the query string included in what is signed", async () => {
    const v2 = JSON.stringify({
      inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: classifyRows(4).inputs }],
    });
    const path = "/v2/models/digits/infer?trace=1";
    const res = await post(`${server.url}${path}`, v2, await signed(path, v2));
    expect(res.status).toBe(200);
    const other = await post(`${server.url}${path}`, v2, await signed("/v2/models/digits/infer", v2));
    expect(other.status).toBe(401);
  });

  it.each([
    ["unsigned", async () => ({}), /missing x-edgecascade-timestamp or x-edgecascade-signature/],
    [
      "a tampered body",
      async () => signed("/v1/classify", body.replace('"digits"', '"digits" ')),
      /signature does not match/,
    ],
    ["signed for another path", async () => signed("/v2/models/digits/infer", body), /signature does not match/],
    ["a stale timestamp (2 minutes old)", async () => signed("/v1/classify", body, Date.now() - 120_000), /stale/],
    [
      "a wrong secret",
      async () => signatureHeaders("another-secret", { method: "POST", path: "/v1/classify", body }),
      /signature does not match/,
    ],
    [
      "a malformed signature",
      async () => ({ ...(await signed("/v1/classify", body)), [SIGNATURE_HEADER]: "zz" }),
      /malformed x-edgecascade-signature/,
    ],
    [
      "a malformed timestamp",
      async () => ({ ...(await signed("/v1/classify", body)), [TIMESTAMP_HEADER]: "yesterday" }),
      /malformed x-edgecascade-timestamp/,
    ],
  ])("%s: 401, and nothing runs", async (_, headers, reason) => {
    const rows = async () => counted((await get(`${server.url}/metrics`)).body, "edgecascade_inference_rows_total");
    const before = await rows();
    const res = await post(`${server.url}/v1/classify`, body, await headers());
    expect(await rows()).toBe(before);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
    expect(res.body.error).toMatch(reason);
  });

  it("binary tensor data: the signature covers the raw bytes", async () => {
    const { body: bytes, headers } = binaryInferBody([classifyRows(4).inputs as number[]]);
    const path = "/v2/models/digits/infer";
    const sign = (b: Uint8Array) => signatureHeaders(SECRET, { method: "POST", path, body: b });
    expect((await postInfer(`${server.url}${path}`, bytes, { ...headers, ...(await sign(bytes)) })).status).toBe(200);
    const tampered = bytes.slice();
    tampered[tampered.length - 1]! ^= 1;
    const refused = await postInfer(`${server.url}${path}`, tampered, { ...headers, ...(await sign(bytes)) });
    expect(refused.status).toBe(401);
  });

  it("health, metadata and metrics stay open without a signature", async () => {
    for (const path of [
      "/v2",
      "/v2/health/live",
      "/v2/health/ready",
      "/v2/models/digits",
      "/v2/models/digits/ready",
      "/metrics",
    ]) {
      expect((await get(`${server.url}${path}`)).status, path).toBe(200);
    }
  });
});
