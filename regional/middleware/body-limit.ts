import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { bodyTooLarge } from "../../protocol/body-limit.ts";

export interface BodyLimitOptions {
  /** Largest accepted body in bytes. */
  maxBytes: number;
}

/**
 * 413 for bodies over `maxBytes` (the one answer: protocol/body-limit.ts). A request with a Content-Length is judged on that header alone; only
 * chunked bodies go through Hono's `bodyLimit`, which counts bytes as they stream. Why not Hono's for all:
 * it reads `c.req.raw.body`, and on @hono/node-server that turns the lightweight request into a full
 * WHATWG Request (streams, AbortSignal) for every request, a large share of the pool's per-request CPU for
 * 64-value bodies. Node's HTTP parser never reads past Content-Length, so the header is the body's size.
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const { maxBytes } = options;
  const refuse = (): never => {
    throw bodyTooLarge(maxBytes);
  };
  const streaming = honoBodyLimit({ maxSize: maxBytes, onError: refuse });
  return async function bodyLimit(c, next) {
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return streaming(c, next);
    if (Number(length) > maxBytes) refuse();
    await next();
  };
}
