/**
 * Kept only for the edge's imports (edge/app.ts, edge/fast-path/classify.ts, edge/routes/{v2,status,classify}.ts,
 * edge/middleware/cors.test.ts) until they move: the Web-standard answer is `protocol/error-answer.ts`, the
 * Hono-dependent parts live outside protocol/. Delete this file once nothing imports it.
 */
import { asServingError } from "../regional/hono-error.ts";
import { errorAnswer as answerOf } from "./error-answer.ts";

export { asServingError } from "../regional/hono-error.ts";
export { refuseOtherMethods } from "../regional/routes/method-not-allowed.ts";

/** `protocol/error-answer.ts`'s answer, after Hono's 4xx exceptions are read as ServingErrors. */
export function errorAnswer(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  return answerOf(asServingError(err) ?? err);
}

/** `errorAnswer` as a web Response. */
export function errorResponse(err: unknown): Response {
  const { status, headers, body } = errorAnswer(err);
  return new Response(body, { status, headers });
}
