import { PayloadTooLarge } from "./errors.ts";

/**
 * The one 413 both tiers answer for a body over `maxBytes`: `request body exceeds <maxBytes> bytes`, with
 * `Connection: close`, since the rest of the refused body is still on the wire and must not be read as the
 * client's next request (a Worker's runtime drops the header; Cloudflare owns that connection). With
 * `coding`, the body was read whole and was over the limit once decompressed (content-coding.ts): the
 * connection stays open.
 */
export function bodyTooLarge(maxBytes: number, coding?: string): PayloadTooLarge {
  return coding === undefined
    ? new PayloadTooLarge(`request body exceeds ${maxBytes} bytes`, { connection: "close" })
    : new PayloadTooLarge(`request body exceeds ${maxBytes} bytes once decompressed (content-encoding ${coding})`);
}
