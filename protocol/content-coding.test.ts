import { deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { failure } from "../test/support/serving-error.ts";
import { answerCoding, decodeBody, requestCoding } from "./content-coding.ts";
import type { ServingError } from "./errors.ts";

const text = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: "pixels", data: [1, 2, 3] }] }));

describe("requestCoding", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["identity", "identity"],
    ["gzip", "gzip"],
    ["GZIP", "gzip"],
    ["x-gzip", "gzip"],
    ["deflate", "deflate"],
    [" gzip , identity", "gzip"],
  ] as const)("%s is %s", (header, coding) => {
    expect(requestCoding(header)).toBe(coding);
  });

  it.each([
    ["br", 'content-encoding "br" is not supported; send gzip, deflate or identity'],
    ["zstd", 'content-encoding "zstd" is not supported; send gzip, deflate or identity'],
    ["gzip, deflate", 'content-encoding "gzip, deflate" is not supported; send gzip, deflate or identity'],
  ])("%s: 415 naming it, with the codings taken in Accept-Encoding", (header, message) => {
    expect(failure(() => requestCoding(header))).toEqual({ status: 415, message });
    const err = (() => {
      try {
        requestCoding(header);
      } catch (e) {
        return e as ServingError;
      }
    })();
    expect(err).toMatchObject({
      code: "unsupported_content_encoding",
      headers: { "accept-encoding": "gzip, deflate" },
    });
  });
});

describe("decodeBody", () => {
  it("decodes gzip (gzip.compress) and deflate (zlib.compress, the zlib format) to the same bytes", async () => {
    expect(await decodeBody(gzipSync(text), "gzip", 1024)).toEqual(text);
    expect(await decodeBody(deflateSync(text), "deflate", 1024)).toEqual(text);
    expect(await decodeBody(text, "identity", 1024)).toBe(text);
  });

  it("413 once the decoded bytes pass the limit, whatever the compressed size", async () => {
    const bomb = gzipSync(new Uint8Array(8 << 20)); // 8 MiB of zeros in about 8 KB
    expect(bomb.length).toBeLessThan(16 * 1024);
    const err = await decodeBody(bomb, "gzip", 256 * 1024).catch((e: unknown) => e);
    expect(err).toMatchObject({
      status: 413,
      message: "request body exceeds 262144 bytes once decompressed (content-encoding gzip)",
    });
    expect(await decodeBody(gzipSync(new Uint8Array(1024)), "gzip", 1024)).toHaveLength(1024);
  });

  it("400 for bytes that are not of the coding", async () => {
    for (const coding of ["gzip", "deflate"] as const) {
      const err = await decodeBody(text, coding, 1024).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400 });
      expect((err as Error).message).toMatch(new RegExp(`^request body is not valid ${coding} data`));
    }
    const truncated = gzipSync(text).subarray(0, 20);
    expect(await decodeBody(truncated, "gzip", 1024).catch((e: unknown) => e)).toMatchObject({ status: 400 });
  });
});

describe("answerCoding (Triton's CompressionTypeUsed)", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip", "gzip"],
    ["deflate", "deflate"],
    // aiohttp's default, which tritonclient's asyncio client sends: the first of equal weights.
    ["gzip, deflate", "gzip"],
    ["gzip, deflate, br", "gzip"],
    ["deflate;q=0.9, gzip;q=0.5", "deflate"],
    ["gzip;q=0.2, identity;q=0.5", "identity"],
    ["br", "identity"],
    ["*", "identity"],
    ["gzip;q=0", "identity"],
    ["gzip;q=x", "identity"],
  ])("%s: %s", (header, coding) => {
    expect(answerCoding(header)).toBe(coding);
  });
});
