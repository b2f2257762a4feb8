import type { MiddlewareHandler } from "hono";

/**
 * While the pool drains, answers carry `Connection: close`, so keep-alive clients reconnect (to a pool that
 * is still ready) instead of reusing a connection the server is about to close.
 */
export function closeConnectionsWhile(draining: () => boolean): MiddlewareHandler {
  return async function closeConnectionsWhileDraining(c, next) {
    await next();
    if (draining()) c.res.headers.set("connection", "close");
  };
}
