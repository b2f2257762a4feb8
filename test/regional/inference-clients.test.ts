import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { postInfer } from "../support/binary-infer.ts";
import {
  type ClientRequest,
  everyClientRequest,
  kserveRest,
  plainJson,
  type Tensor,
  tritonBinary,
  tritonJson,
} from "../support/client-requests.ts";
import { heldoutOf } from "../support/heldout.ts";
import { serverForFile, TOLERANCE, testOptions } from "../support/regional-server.ts";

const server = serverForFile(testOptions(["--region", "eu"]));

const models = {
  digits: { input: "pixels", output: "probabilities", set: heldoutOf("digits") },
  "breast-cancer": { input: "features", output: "probabilities", set: heldoutOf("breast-cancer") },
} as const;
type ModelName = keyof typeof models;
const tensor = (model: ModelName, from: number, n: number): Tensor => {
  const { input, output, set } = models[model];
  return { input, output, rows: set.rows.slice(from, from + n).map((r) => r.input) };
};
const expected = (model: ModelName, from: number, n: number) =>
  models[model].set.rows.slice(from, from + n).flatMap((r) => r.expected[model]!);
const worst = (got: number[], want: number[]) => Math.max(...got.map((g, i) => Math.abs(g - want[i]!)));

/** The answer's values, JSON or binary. */
const valuesOf = (answer: Awaited<ReturnType<typeof postInfer>>): number[] =>
  answer.values ?? answer.json.outputs[0].data;

// The node:http fast path, and (with a query string) the Hono route: both HTTP layers (regional/fast-path/route.ts).
describe.each(["", "?via=hono"])("each client's exact bytes%s", (query) => {
  const url = (model: string) => `${server.url}/v2/models/${model}/infer${query}`;
  const send = (model: string, r: ClientRequest) => postInfer(url(model), r.body, r.headers);

  describe.each(["digits", "breast-cancer"] as const)("%s", (model) => {
    const t = tensor(model, 5, 3);
    it("every client, mode and compression: 200 with the plain JSON request's answer", async () => {
      const plain = await send(model, plainJson(t));
      expect(plain.status).toBe(200);
      for (const r of everyClientRequest(t, model)) {
        const answer = await send(model, r);
        expect([r.name, answer.status, answer.json.error]).toEqual([r.name, 200, undefined]);
        expect(answer.headers["content-encoding"], r.name).toBeUndefined();
        expect(answer.json).toMatchObject({ model_name: model, model_version: "1" });
        expect(answer.json.outputs[0]).toMatchObject({ name: "probabilities", shape: plain.json.outputs[0].shape });
        expect(worst(valuesOf(answer), valuesOf(plain)), r.name).toBeLessThanOrEqual(1e-6);
        expect(worst(valuesOf(answer), expected(model, 5, 3)), r.name).toBeLessThanOrEqual(TOLERANCE);
      }
    });
  });

  it("a tritonclient JSON-mode body at batch 1, gzip: the JSON answer it asked for", async () => {
    const answer = await send("digits", tritonJson(tensor("digits", 0, 1), "http", "gzip"));
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(answer.json.outputs[0]).toMatchObject({ shape: [1, 10], datatype: "FP32" });
  });

  it("KServe's id comes back; a model_name naming another model is a 400", async () => {
    const t = tensor("digits", 0, 2);
    const answer = await send("digits", kserveRest(t, "digits"));
    expect(answer.json.id).toBe("1b4e28ba-2fa1-11d2-883f-0016d3cca427");
    const wrong = await send("digits", kserveRest(t, "breast-cancer"));
    expect([wrong.status, wrong.json]).toEqual([
      400,
      { error: 'the body\'s "model_name" is "breast-cancer" but the path names model "digits"', code: "bad_request" },
    ]);
  });

  it.each<[string, { input?: string; output?: string; width?: number }, string]>([
    ["an unknown input", { input: "image" }, 'unknown input "image"; model "digits" has input "pixels"'],
    ["an unknown output", { output: "logits" }, 'unknown output "logits"; model "digits" has output "probabilities"'],
    ["a wrong shape", { width: 63 }, 'input "pixels" has shape [1,63]; model "digits" expects [-1,64]'],
  ])("strictness stays in compressed bodies: %s is a 400 naming it", async (_, change, error) => {
    const rows = [Array.from({ length: change.width ?? 64 }, () => 1)];
    const t = { input: change.input ?? "pixels", output: change.output ?? "probabilities", rows };
    for (const r of [tritonJson(t, "aio", "gzip"), tritonJson(t, "http", "deflate")]) {
      const answer = await send("digits", r);
      expect([r.name, answer.status, answer.json.error]).toEqual([r.name, 400, error]);
    }
  });

  it("a wrong datatype in a compressed binary body is a 400", async () => {
    const r = tritonBinary(tensor("digits", 0, 1), "aio");
    const length = Number(r.headers["Inference-Header-Content-Length"]);
    const head = new TextDecoder().decode(r.body.subarray(0, length)).replace('"FP32"', '"FP64"');
    const body = new Uint8Array(r.body);
    body.set(new TextEncoder().encode(head));
    const answer = await send("digits", {
      ...r,
      headers: { ...r.headers, "Content-Encoding": "gzip" },
      body: gzipSync(body),
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('input "pixels" has datatype FP64; model "digits" expects FP32');
  });

  it("another content coding is a 415 naming it, with the codings taken in Accept-Encoding", async () => {
    const r = tritonJson(tensor("digits", 0, 1), "http");
    const answer = await send("digits", { ...r, headers: { ...r.headers, "Content-Encoding": "br" } });
    expect(answer.status).toBe(415);
    expect(answer.headers["accept-encoding"]).toBe("gzip, deflate");
    expect(answer.json).toEqual({
      error: 'content-encoding "br" is not supported; send gzip, deflate or identity',
      code: "unsupported_content_encoding",
    });
  });
});

/** `members` gzip members of 16 MiB of zeros each, one after another (one gzip stream to a decoder: RFC 1952 §2.2). */
function zeroBomb(members: number): Uint8Array {
  const member = gzipSync(new Uint8Array(16 << 20));
  const out = new Uint8Array(member.length * members);
  for (let i = 0; i < members; i++) out.set(member, i * member.length);
  return out;
}

describe("decompression bombs", () => {
  const gzipped = { "content-type": "application/json", "content-encoding": "gzip" };
  const ordinary = async () => {
    const r = tritonJson(tensor("digits", 0, 1), "http", "gzip");
    return (await postInfer(`${server.url}/v2/models/digits/infer`, r.body, r.headers)).status;
  };

  it("1 GiB of zeros gzipped (1 MB on the wire): 413 from its length, on both layers", async () => {
    const bomb = zeroBomb(64);
    expect(bomb.length).toBeGreaterThan(256 * 1024);
    for (const query of ["", "?via=hono"]) {
      const answer = await postInfer(`${server.url}/v2/models/digits/infer${query}`, bomb, gzipped);
      expect(answer.status).toBe(413);
    }
    expect(await ordinary()).toBe(200);
  });

  it("192 MiB of zeros in 190 KB, under the wire limit: 413 once decompressed past it, memory and pool unharmed", async () => {
    const bomb = zeroBomb(12);
    expect(bomb.length).toBeLessThan(256 * 1024);
    const before = process.memoryUsage().rss;
    for (const query of ["", "?via=hono"]) {
      const answer = await postInfer(`${server.url}/v2/models/digits/infer${query}`, bomb, gzipped);
      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({
        error: "request body exceeds 262144 bytes once decompressed (content-encoding gzip)",
        code: "payload_too_large",
      });
    }
    // Decoding stops at the limit: nowhere near the 192 MiB a full decode would hold (the pool runs in this process).
    expect(process.memoryUsage().rss - before).toBeLessThan(64 << 20);
    expect(await ordinary()).toBe(200);
  });

  it("a 1 GiB bomb sent chunked, with another request in flight beside it: 413, and the other answered", async () => {
    const bomb = zeroBomb(64);
    const chunked = request(`${server.url}/v2/models/digits/infer`, {
      method: "POST",
      headers: gzipped,
      body: Readable.from(
        (function* () {
          for (let at = 0; at < bomb.length; at += 64 * 1024) yield bomb.subarray(at, at + 64 * 1024);
        })(),
      ),
    });
    const [bombed, other] = await Promise.all([chunked, ordinary()]);
    expect(bombed.statusCode).toBe(413);
    await bombed.body.dump();
    expect(other).toBe(200);
  });
});
