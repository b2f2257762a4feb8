import { connect } from "node:net";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { heldout } from "../support/heldout.ts";
import {
  classifyRows,
  post,
  startTestServer,
  type TestServer,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

/** mulberry32: a seeded generator, so a failure reproduces. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

interface Case {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Built to be wrong: must be a 4xx. Random mutations may happen to be valid and only must not be a 5xx. */
  malformed: boolean;
}

const JSON_TYPE = { "content-type": "application/json" };
const row = heldout.rows[0]!.input;

/** Requests that are wrong by construction, one per kind of mistake. */
function malformedCase(r: ReturnType<typeof random>): Case {
  const classify = (body: unknown, headers: Record<string, string> = JSON_TYPE): Case => ({
    method: "POST",
    path: "/v1/classify",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    malformed: true,
  });
  const infer = (tensor: Record<string, unknown>, extra: Record<string, unknown> = {}): Case => ({
    method: "POST",
    path: "/v2/models/digits/infer",
    headers: JSON_TYPE,
    body: JSON.stringify({
      inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: row, ...tensor }],
      ...extra,
    }),
    malformed: true,
  });
  const garbage = () => Array.from({ length: 1 + r.int(200) }, () => String.fromCharCode(r.int(0x2fff))).join("");
  const makers: (() => Case)[] = [
    () =>
      classify(classifyRows(0), { "content-type": r.pick(["text/plain", "application/xml", "multipart/form-data"]) }),
    () => classify(classifyRows(0), {}),
    () => classify(""),
    () => classify(garbage()),
    () => classify(r.pick(["[]", "1", '"x"', "null", "true", "[1,2]"])),
    () => classify({ inputs: row }),
    () => classify({ model: "digits" }),
    () => classify({ model: r.pick([1, [], {}, null, true, ""]), inputs: row }),
    () => classify({ model: "digits", inputs: r.pick([[], {}, "row", null, 5]) }),
    () => classify({ model: "digits", inputs: row.slice(0, r.int(64)) }),
    () => classify({ model: "digits", inputs: [...row, ...row.slice(0, 1 + r.int(10))] }),
    () => {
      const at = r.int(64);
      return classify({
        model: "digits",
        inputs: row.map((x, i) => (i === at ? r.pick(["1", null, [], {}, true]) : x)),
      });
    },
    () =>
      classify(
        `{"model":"digits","inputs":[${row.slice(1).join(",")},${r.pick(["1e999", "-1e999", "NaN", "Infinity"])}]}`,
      ),
    () => classify({ model: "digits", inputs: [...row.slice(1), 3.5e38 * 10] }),
    () => classify({ model: "digits", inputs: Array.from({ length: 65 + r.int(100) }, () => row) }),
    () => classify({ model: "digits", inputs: [row, row.slice(1)] }),
    () => classify({ model: "digits", inputs: [row, 7] }),
    () => classify({ model: "digits", inputs: row, [r.pick(["foo", "inputz", "__proto__", "constructor"])]: 1 }),
    () => classify({ model: "digits", inputs: row, version: r.pick(["one", "1.0", "-1", "", 1]) }),
    () => classify({ model: "digits", inputs: row, id: r.pick([1, null, [], {}]) }),
    () =>
      classify({ model: "digits", inputs: row, parameters: r.pick([[], "x", { cascade: "sometimes" }, { foo: 1 }]) }),
    () => classify(`{"model":"digits","inputs":${"[".repeat(5000)}${"]".repeat(5000)}}`),
    () => classify(`{"model":"digits","inputs":[${"1,".repeat(140_000)}1]}`),
    () => classify({ model: "../../etc/passwd", inputs: row }),
    () => ({
      ...classify(classifyRows(0)),
      headers: { ...JSON_TYPE, [DEADLINE_HEADER]: r.pick(["-5", "soon", "1e3", "1 000", ""]) },
    }),
    () => infer({ name: r.pick(["x", "", "PIXELS"]) }),
    () => infer({ datatype: r.pick(["FP64", "INT8", "BYTES", "float", ""]) }),
    () => infer({ shape: r.pick([[64], [1, 63], [2, 64], [0, 64], [-1, 64], [1, 64, 1], [1.5, 64], []]) }),
    () => infer({ data: row.slice(0, r.int(64)) }),
    () => infer({ data: [[[[[[[[[[row]]]]]]]]]] }),
    () => infer({ parameters: { binary_data_size: 256 } }),
    () => infer({ extra: 1 }),
    () => infer({}, { outputs: [{ name: r.pick(["logits", ""]) }] }),
    () => infer({}, { outputs: [{ name: "probabilities", parameters: { binary_data: r.pick(["yes", 1, null]) } }] }),
    () => infer({}, { parameters: { binary_data_output: r.pick(["true", 0, []]) } }),
    () => ({
      method: "POST",
      path: "/v2/models/digits/infer",
      headers: { "inference-header-content-length": r.pick(["-1", "x", "99999", "1.5", ""]) },
      body: JSON.stringify({ inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: row }] }),
      malformed: true,
    }),
    () => infer({}, { inputs: r.pick([[], "x", [1], [null]]) }),
    () => infer({ shape: [100_000, 64] }),
    () => ({ method: r.pick(["GET", "PUT", "DELETE", "PATCH"]), path: "/v1/classify", headers: {}, malformed: true }),
    () => ({
      method: "GET",
      path: `/v2/models/${r.pick(["..", "%2e%2e", "nope", "digits%00", "a".repeat(300)])}/ready`,
      headers: {},
      malformed: true,
    }),
    () => ({
      method: "POST",
      path: `/${garbage().replace(/[^a-z/]/gi, "") || "x"}`,
      headers: JSON_TYPE,
      body: "{}",
      malformed: true,
    }),
    () => ({
      method: "POST",
      path: "/v2/models/digits/versions/abc/infer",
      headers: JSON_TYPE,
      body: JSON.stringify({ inputs: [] }),
      malformed: true,
    }),
    () => ({
      method: "POST",
      path: "/v2/repository/models/digits/load",
      headers: JSON_TYPE,
      body: "{}",
      malformed: true,
    }),
  ];
  return r.pick(makers)();
}

/** A valid request with a few random byte-level edits: usually broken, sometimes still valid. */
function mutatedCase(r: ReturnType<typeof random>): Case {
  const valid =
    r.next() < 0.5
      ? JSON.stringify(classifyRows(r.int(360), 1 + r.int(3)))
      : JSON.stringify({
          inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: heldout.rows[r.int(360)]!.input }],
        });
  const path = valid.startsWith('{"model"') ? "/v1/classify" : "/v2/models/digits/infer";
  const chars = [...valid];
  for (let edits = 1 + r.int(3); edits > 0; edits--) {
    const at = r.int(chars.length);
    const op = r.int(4);
    if (op === 0) chars.splice(at, 1);
    else if (op === 1)
      chars.splice(at, 0, r.pick(['"', "{", "}", "[", "]", ",", ":", "-", "e", "9", ".", "\\", "\u0000", "é"]));
    else if (op === 2) chars[at] = String.fromCharCode(r.int(128));
    else chars.length = at;
  }
  return { method: "POST", path, headers: JSON_TYPE, body: chars.join(""), malformed: false };
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(testOptions());
});
afterAll(() => server.shutdown());

describe("fuzz: malformed requests", () => {
  it("thousands of malformed requests: never a 5xx, every error a JSON 4xx; then correct answers still come back", async () => {
    const r = random(20260101);
    const cases = Array.from({ length: 4000 }, (_, i) => (i % 2 ? malformedCase(r) : mutatedCase(r)));
    const pool = new Pool(server.url, { connections: 16 });
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const res = await pool.request({ method: c.method, path: c.path, headers: c.headers, body: c.body });
        const text = await res.body.text();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const what = `${c.method} ${c.path} ${JSON.stringify(c.body?.slice(0, 160))} -> ${res.statusCode} ${text.slice(0, 200)}`;
        if (res.statusCode >= 500) problems.push(what);
        else if (res.statusCode >= 400) {
          let body: { error?: unknown; code?: unknown } = {};
          try {
            body = JSON.parse(text);
          } catch {
            problems.push(`not JSON: ${what}`);
          }
          if (typeof body.error !== "string" || typeof body.code !== "string") problems.push(`no error/code: ${what}`);
        } else if (c.malformed) problems.push(`accepted: ${what}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await pool.close();
    expect(problems.slice(0, 10)).toEqual([]);
    const fourxx = [...statuses].filter(([s]) => s >= 400 && s < 500).reduce((n, [, k]) => n + k, 0);
    expect(fourxx).toBeGreaterThan(cases.length * 0.75);
    for (const status of [400, 404, 405, 413, 415]) expect(statuses.get(status), `status ${status}`).toBeGreaterThan(0);

    const after = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(`${server.url}/v1/classify`, classifyRows(i * 9))),
    );
    after.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(worstDifference(res.body.predictions, i * 9)).toBeLessThanOrEqual(TOLERANCE);
    });
  });

  it.each([
    ["a request line that is not HTTP", "GARBAGE / NOTHTTP\r\n\r\n", 400],
    ["a header without a colon", "GET /v2 HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n", 400],
    [
      "a content-length that is not a number",
      "POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      400,
    ],
    ["80 KiB of headers", `GET /v2 HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(80 * 1024)}\r\n\r\n`, 431],
    ["an invalid Host header", "GET /v2 HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n", 400],
    ["a backslash in the path", "GET /v2\\..\\x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400],
  ])("malformed HTTP (%s) gets a JSON 4xx", async (_, raw, status) => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1", () => socket.write(raw));
      let got = "";
      socket.setEncoding("utf8").on("data", (d) => {
        got += d;
      });
      socket.on("end", () => resolve(got)).on("error", reject);
    });
    expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    expect(body).toMatchObject({ code: "bad_request", error: expect.stringMatching(/^malformed (HTTP )?request/) });
  });
});
