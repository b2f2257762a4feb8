import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { signatureHeaders } from "../../protocol/signing.ts";
import { runFuzz } from "../../scripts/validate/fuzz-run.ts";
import { validationModel } from "../../scripts/validate/model.ts";
import {
  classifyRows,
  post,
  serverForFile,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const SECRET = "fuzz-secret";
const server = serverForFile(testOptions([], { REGIONAL_SHARED_SECRET: SECRET }));

describe("fuzz: malformed and hostile requests", () => {
  it("a smaller run of npm run validate:fuzz: no 5xx, no dropped connection, every error a JSON 4xx, valid answers right", async () => {
    // scripts/validate/hostile.ts: wrong types and shapes, non-finite numbers, deep nesting, bodies over the limit,
    // invalid UTF-8, wrong methods and content types, forged and expired signatures, header floods; every 4th
    // request valid (signed) and its answer checked against the fixture; slow bodies alongside.
    const report = await runFuzz(
      { name: "pool", origin: server.url, model: validationModel(), secret: SECRET },
      { requests: 3000, seed: 20260101, slowBodies: 4, slowBodyMs: 500 },
    );
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ serverErrors: 0, dropped: 0, slowBodiesAnswered: 4 });
    expect(report.validCorrect).toBe(report.valid);
    for (const status of ["400", "401", "404", "405", "413", "415", "431"]) {
      expect(report.statuses[status], `status ${status}`).toBeGreaterThan(0);
    }
    // The pool is still there and answers correctly.
    const after = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const body = JSON.stringify(classifyRows(i * 9));
        const headers = await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body });
        return post(`${server.url}/v1/classify`, body, headers);
      }),
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
    // The answer must survive the close: the pool drains what is still coming before it ends the connection
    // (closing with unread bytes would reset it and could destroy the 431 on its way).
    [
      "80 KiB of headers, then a 300 KB body",
      `POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\nX-Big: ${"a".repeat(80 * 1024)}\r\n\r\n${"1".repeat(300_000)}`,
      431,
    ],
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
