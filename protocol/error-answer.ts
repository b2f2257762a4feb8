import { errorBody, errorStatus, ServingError } from "./errors.ts";

/**
 * The one error answer of every tier: a ServingError as `{"error", "code"}` with its status and headers;
 * anything else as a 500 without internals (the caller logs it). Framework exceptions (Hono's) are turned
 * into ServingErrors by the tier before they get here (`hono-shared/hono-error.ts`).
 */
export function errorAnswer(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  const known = err instanceof ServingError ? err : undefined;
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
