import type { ServingError } from "../../protocol/errors.ts";
import type { RequestEnd } from "./trace-record.ts";

/** How an HTTP inference request ended, for its span: the route pattern, the status, the error when it failed. */
export function ended(route: string, status: number, error?: ServingError): RequestEnd {
  return {
    protocol: "http",
    method: "POST",
    route,
    status,
    ...(error
      ? { error: { code: error.code, message: error.message } }
      : status >= 500
        ? { error: { code: "internal", message: "internal error" } }
        : {}),
  };
}
