import { describe, expect, it } from "vitest";
import { binaryInferBody, postInfer } from "../support/binary-infer.ts";
import { heldout } from "../support/heldout.ts";
import { serverForFile, TOLERANCE, testOptions } from "../support/regional-server.ts";

const server = serverForFile(testOptions(["--region", "eu"]));

const rows = (from: number, n: number) => heldout.rows.slice(from, from + n).map((r) => r.input);
const expected = (from: number, n: number) => heldout.rows.slice(from, from + n).flatMap((r) => r.expected.digits!);
const worst = (got: number[], want: number[]) => Math.max(...got.map((g, i) => Math.abs(g - want[i]!)));
const json = { "content-type": "application/json" };
/** Significant digits of a number as written in JSON ("0.00012" → 2, "1.5e-7" → 2). */
const significantDigits = (text: string) =>
  text.replace(/e.*$/, "").replace(/[-.]/g, "").replace(/^0+/, "").replace(/0+$/, "").length;

// Both the node:http fast path and, with a query string, the Hono route (regional/fast-path/route.ts).
describe.each(["", "?via=hono"])("binary tensor data (Triton's extension)%s", (query) => {
  const url = () => `${server.url}/v2/models/digits/infer${query}`;

  it("binary rows in, JSON out: the same answer as JSON rows", async () => {
    const { body, headers } = binaryInferBody(rows(40, 3), { id: "b1" });
    const answer = await postInfer(url(), body, headers);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(answer.json).toMatchObject({ model_name: "digits", model_version: "1", id: "b1" });
    expect(answer.json.outputs[0]).toMatchObject({ name: "probabilities", shape: [3, 10], datatype: "FP32" });
    expect(worst(answer.json.outputs[0].data, expected(40, 3))).toBeLessThanOrEqual(TOLERANCE);
  });

  it("JSON rows in, binary out when the output asks for binary_data", async () => {
    const body = JSON.stringify({
      inputs: [{ name: "pixels", shape: [2, 64], datatype: "FP32", data: rows(7, 2) }],
      outputs: [{ name: "probabilities", parameters: { binary_data: true } }],
    });
    const answer = await postInfer(url(), body, json);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/octet-stream");
    expect(answer.json.outputs).toEqual([
      { name: "probabilities", shape: [2, 10], datatype: "FP32", parameters: { binary_data_size: 80 } },
    ]);
    expect(Number(answer.headers["content-length"])).toBe(
      Number(answer.headers["inference-header-content-length"]) + 80,
    );
    expect(worst(answer.values!, expected(7, 2))).toBeLessThanOrEqual(TOLERANCE);
  });

  it("64 binary rows in and out (binary_data_output), the same values as JSON", async () => {
    const { body, headers } = binaryInferBody(rows(100, 64), { parameters: { binary_data_output: true } });
    const answer = await postInfer(url(), body, headers);
    expect(answer.status).toBe(200);
    expect(answer.values).toHaveLength(640);
    expect(worst(answer.values!, expected(100, 64))).toBeLessThanOrEqual(TOLERANCE);
    expect(answer.headers["x-served-by"]).toBe("regional:eu");
  });

  it("JSON answers write each FP32 value as its shortest decimal: the same float32 as the binary answer", async () => {
    const sent = rows(200, 16);
    const asJson = await postInfer(
      url(),
      JSON.stringify({ inputs: [{ name: "pixels", shape: [16, 64], datatype: "FP32", data: sent }] }),
      json,
    );
    const { body, headers } = binaryInferBody(sent, { parameters: { binary_data_output: true } });
    const asBinary = await postInfer(url(), body, headers);
    const classify = await fetch(`${server.url}/v1/classify${query}`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ model: "digits", inputs: sent }),
    });
    const text = await classify.text();
    const data = asJson.json.outputs[0].data as number[];
    // Same float32 values, each read back from the text; no score with more than 9 significant digits.
    expect(Float32Array.from(data)).toEqual(Float32Array.from(asBinary.values!));
    const scores = (JSON.parse(text) as { predictions: { scores: number[] }[] }).predictions.flatMap((p) => p.scores);
    expect(Float32Array.from(scores)).toEqual(Float32Array.from(asBinary.values!));
    const written = [...text.matchAll(/"scores":\[([^\]]*)\]/g)].flatMap((m) => m[1]!.split(","));
    expect(written).toHaveLength(160);
    expect(Math.max(...written.map(significantDigits))).toBeLessThanOrEqual(9);
    expect(written.map(Number)).toEqual(scores);
    // A parsed number prints as the text it was read from when that text was the shortest.
    expect(Math.max(...data.map((d) => significantDigits(String(d))))).toBeLessThanOrEqual(9);
  });

  it.each([
    ["a size that does not match the shape", { "inference-header-content-length": "x" }, 400],
    // Read as JSON (what Triton does with an octet-stream body without the header): the bytes after it are not.
    ["no Inference-Header-Content-Length", { "inference-header-content-length": undefined }, 400],
  ])("%s: a JSON 4xx", async (_, override, status) => {
    const { body, headers } = binaryInferBody(rows(0, 1));
    const sent = Object.fromEntries(
      Object.entries({ ...headers, ...override }).filter((e): e is [string, string] => e[1] !== undefined),
    );
    const answer = await postInfer(url(), body, sent);
    expect(answer.status).toBe(status);
    expect(typeof answer.json.error).toBe("string");
  });
});
