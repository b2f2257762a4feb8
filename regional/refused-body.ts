import { ServerResponse } from "node:http";
import type { Readable } from "node:stream";

/** How much of a refused body is read and dropped before the connection is closed regardless. */
export interface DiscardLimits {
  /** Bytes. */
  maxBytes: number;
  /** Milliseconds without a byte from the client. */
  quietMs: number;
  /** Milliseconds in all. */
  maxMs: number;
}

/**
 * nginx's lingering close (`lingering_timeout` 5 s, `lingering_time` 30 s), and @hono/node-server's own drain
 * bound of 64 MiB: a client still sending reads its answer, a client sending without end costs a bounded read.
 */
export const DISCARD_LIMITS: DiscardLimits = { maxBytes: 64 * 1024 * 1024, quietMs: 5_000, maxMs: 30_000 };

/**
 * Read and drop what `body` still sends; `done` once, with true when it ended, false when it failed, closed, or
 * passed a limit first.
 */
export function discardBody(body: Readable, limits: DiscardLimits, done: (ended: boolean) => void): void {
  if (body.readableEnded || body.destroyed) {
    done(body.readableEnded);
    return;
  }
  let bytes = 0;
  let finished = false;
  const finish = (ended: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(quiet);
    clearTimeout(total);
    body.off("data", onData);
    body.off("end", onEnd);
    body.off("error", onFail);
    body.off("close", onFail);
    done(ended);
  };
  const onEnd = () => finish(true);
  const onFail = () => finish(false);
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > limits.maxBytes) finish(false);
    else quiet.refresh();
  };
  const quiet = setTimeout(onFail, limits.quietMs);
  const total = setTimeout(onFail, limits.maxMs);
  body.on("data", onData);
  body.on("end", onEnd);
  body.on("error", onFail);
  body.on("close", onFail);
  body.resume();
}

/**
 * The pool's responses (node:http's `ServerResponse` option). A 413 answered while the refused body is still
 * arriving goes out at once, but the response ends only once that body has been read and dropped
 * (`discardBody`, up to `DISCARD_LIMITS`): the connection then closes (the 413 says `Connection: close`) with
 * nothing unread, so a client still sending finishes and reads the answer. Ending it at once would close the
 * socket on unread bytes, which the kernel answers with a reset that can destroy the answer before the client
 * reads it. Past a limit the connection is closed regardless.
 */
export class RefusedBodyResponse extends ServerResponse {
  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    const req = this.req;
    if (this.statusCode !== 413 || req.complete || this.writableEnded) {
      return super.end(chunk as never, encoding as never, callback as never);
    }
    const data = typeof chunk === "function" ? undefined : chunk;
    const cb = [chunk, encoding, callback].find((a) => typeof a === "function") as (() => void) | undefined;
    const coding = typeof encoding === "string" ? (encoding as BufferEncoding) : undefined;
    if (data !== undefined && data !== null) {
      if (!this.headersSent && !this.hasHeader("content-length")) {
        this.setHeader("content-length", Buffer.byteLength(data as string | Uint8Array, coding));
      }
      if (coding) this.write(data, coding);
      else this.write(data);
    }
    // A reader that stopped at the limit (Hono's body limit, through a web stream over `req`) would keep, and
    // by its backpressure pause, what follows: the refused body is dropped here alone.
    req.removeAllListeners("data");
    discardBody(req, DISCARD_LIMITS, (ended) => {
      super.end(cb);
      if (!ended) req.destroy();
    });
    return this;
  }
}
