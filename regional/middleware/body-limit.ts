import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { ServingError } from "../../protocol/errors.ts";

export interface BodyLimitOptions {
  /** Largest accepted body in bytes. */
  maxBytes: number;
  /** The 413 message. Default "body exceeds <maxBytes> bytes". */
  message?: string;
}

/**
 * The 413 for a body over the limit. The rest of the refused body is still on the wire: the connection
 * closes rather than let the client send its next request after bytes the server never read. The header
 * travels with the error: the one error response is built from the error alone.
 */
export function bodyTooLarge(maxBytes: number, message = `body exceeds ${maxBytes} bytes`): ServingError {
  return new ServingError(413, "payload_too_large", message, { connection: "close" });
}

/**
 * 413 for bodies over `maxBytes`. A request with a Content-Length is judged on that header alone; only
 * chunked bodies go through Hono's `bodyLimit`, which counts bytes as they stream. Why not Hono's for all:
 * it reads `c.req.raw.body`, and on @hono/node-server that turns the lightweight request into a full
 * WHATWG Request (streams, AbortSignal) for every request, a large share of the pool's per-request CPU for
 * 64-value bodies. Node's HTTP parser never reads past Content-Length, so the header is the body's size.
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const { maxBytes, message } = options;
  const refuse = (): never => {
    throw bodyTooLarge(maxBytes, message);
  };
  const streaming = honoBodyLimit({ maxSize: maxBytes, onError: refuse });
  return async function bodyLimit(c, next) {
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return streaming(c, next);
    if (Number(length) > maxBytes) refuse();
    await next();
  };
}
