/**
 * HTTP content codings of inference requests and answers (RFC 9110 §8.4), as Triton's HTTP server treats them
 * (triton-inference-server/server src/http_server.cc: `GetRequestCompressionType`, `CompressionTypeUsed`):
 * request bodies may be gzip or deflate (zlib format, what Python's `zlib.compress` writes and tritonclient
 * sends), anything else is refused; an infer answer is compressed only with a coding the request's
 * Accept-Encoding prefers. Web-standard APIs only (DecompressionStream): the edge Worker and the pools share it.
 */
import { bodyTooLarge } from "./body-limit.ts";
import { BadRequest, ServingError } from "./errors.ts";

/** A request body's coding that this system decodes. */
export type RequestCoding = "identity" | "gzip" | "deflate";
/** The codings a request body may carry, as the 415 says (and Triton's `Accept-Encoding` on that error). */
export const ACCEPTED_CODINGS = "gzip, deflate";

/** 415 naming a content coding this system does not decode, with the ones it does in `Accept-Encoding` (RFC 9110 §12.5.3). */
export function unsupportedCoding(coding: string): ServingError {
  return new ServingError(
    415,
    "unsupported_content_encoding",
    `content-encoding "${coding}" is not supported; send gzip, deflate or identity`,
    { "accept-encoding": ACCEPTED_CODINGS },
  );
}

/**
 * The coding of a request body from its `Content-Encoding` (absent, empty or `identity`: none). One coding at
 * most (`identity` entries aside): a body compressed twice is refused like an unknown coding. `x-gzip` is gzip
 * (RFC 9110 §8.4.1.3).
 */
export function requestCoding(header: string | null | undefined): RequestCoding {
  if (!header) return "identity";
  const codings = header
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return "identity";
  if (codings.length > 1) throw unsupportedCoding(header.trim());
  const coding = codings[0]!;
  if (coding === "gzip" || coding === "x-gzip") return "gzip";
  if (coding === "deflate") return "deflate";
  throw unsupportedCoding(coding);
}

/**
 * `body` decoded from `coding`, refused with a 413 as soon as the decoded bytes pass `maxBytes` (the stream is
 * cancelled there: a decompression bomb costs at most `maxBytes` of memory and the time to inflate that much),
 * and with a 400 when the bytes are not valid for the coding.
 */
export async function decodeBody(body: Uint8Array, coding: RequestCoding, maxBytes: number): Promise<Uint8Array> {
  if (coding === "identity") return body;
  const source = new Blob([body as Uint8Array<ArrayBuffer>]).stream();
  const reader = source.pipeThrough(new DecompressionStream(coding)).getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (length > maxBytes) {
        void reader.cancel().catch(() => {});
        throw bodyTooLarge(maxBytes, coding);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof ServingError) throw err;
    throw new BadRequest(`request body is not valid ${coding} data: ${(err as Error).message}`);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** A coding an infer answer may be compressed with. */
export type AnswerCoding = "identity" | "gzip" | "deflate";

/**
 * Triton's choice of an infer answer's coding from the request's `Accept-Encoding` (`CompressionTypeUsed`): of
 * `identity`, `gzip` and `deflate`, the one with the highest q-value above 0 (the first on a tie); anything
 * else, `*` included, is ignored; no header, `identity`. Triton compresses infer answers only, never metadata,
 * health or errors: clients that send Accept-Encoding without decoding (tritonclient's asyncio client turns
 * aiohttp's decompression off, and aiohttp still sends `gzip, deflate`) read those as they are.
 */
export function answerCoding(acceptEncoding: string | null | undefined): AnswerCoding {
  if (!acceptEncoding) return "identity";
  let chosen: AnswerCoding = "identity";
  let weight = 0;
  for (const element of acceptEncoding.split(",")) {
    const [name, ...params] = element.split(";");
    const coding = name!.trim().toLowerCase();
    if (coding !== "identity" && coding !== "gzip" && coding !== "deflate") continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split("=");
      if (key?.trim().toLowerCase() === "q") q = Number(value?.trim());
    }
    if (Number.isFinite(q) && q > weight) {
      chosen = coding;
      weight = q;
    }
  }
  return chosen;
}
