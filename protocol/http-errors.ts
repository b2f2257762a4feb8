import type { Env, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { errorBody, errorStatus, MethodNotAllowed, ServingError } from "./errors.ts";

/**
 * What a thrown value means to the client: a ServingError as it is; one of Hono's own 4xx HTTPExceptions
 * (a body that could not be read, say) as the same status with the JSON shape; anything else is ours, an
 * internal error (undefined), which the caller logs.
 */
export function asServingError(err: unknown): ServingError | undefined {
  if (err instanceof ServingError) return err;
  if (err instanceof HTTPException && err.status < 500) {
    return new ServingError(err.status, "bad_request", err.message || "bad request");
  }
  return undefined;
}

/** The one error answer of every tier: `{"error", "code"}` with the error's status and headers; 500 without internals otherwise. */
export function errorAnswer(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  const known = asServingError(err);
  return {
    status: errorStatus(known ?? err),
    headers: { "content-type": "application/json", ...(known?.headers ?? {}) },
    body: JSON.stringify(errorBody(known ?? err)),
  };
}

/** `errorAnswer` as a web Response. */
export function errorResponse(err: unknown): Response {
  const { status, headers, body } = errorAnswer(err);
  return new Response(body, { status, headers });
}

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
