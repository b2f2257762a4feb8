import { HTTPException } from "hono/http-exception";
import { ServingError } from "../protocol/errors.ts";

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
