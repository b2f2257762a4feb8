import { ServingError } from "../../protocol/errors.ts";

/** The status and message of the ServingError `fn` throws (fails the test if it throws nothing or else). */
export function failure(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServingError) return { status: err.status, message: err.message };
    throw err;
  }
  throw new Error("expected a ServingError");
}
