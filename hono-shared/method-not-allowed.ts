import type { Env, Hono } from "hono";
import { MethodNotAllowed } from "../protocol/errors.ts";

/**
 * After a router's own routes: any other method on those paths is a 405 naming the allowed ones, instead of
 * Hono's default 404. Hono answers HEAD from GET routes, so GET routes allow HEAD too.
 */
export function refuseOtherMethods<E extends Env>(app: Hono<E>, routes: Record<string, readonly string[]>): Hono<E> {
  for (const [path, methods] of Object.entries(routes)) {
    const allowed = methods.includes("GET") ? [...methods, "HEAD"] : [...methods];
    app.all(path, (c) => {
      throw new MethodNotAllowed(c.req.method, allowed);
    });
  }
  return app;
}
