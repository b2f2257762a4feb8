import { status as GrpcStatus, Metadata } from "@grpc/grpc-js";
import { asServingError } from "../../hono-shared/hono-error.ts";

/**
 * The gRPC status each HTTP status of the error family (protocol/errors.ts) answers with, as Triton and
 * gRPC's own HTTP mapping do. 413 is RESOURCE_EXHAUSTED (gRPC's code for a message or batch over a limit) and
 * 429 too, with the error's `code` and Retry-After in the trailers to tell them apart. Statuses not listed
 * answer UNKNOWN; 500 answers INTERNAL.
 */
export const GRPC_STATUS_OF_HTTP: Readonly<Record<number, GrpcStatus>> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  405: GrpcStatus.UNIMPLEMENTED,
  409: GrpcStatus.FAILED_PRECONDITION,
  413: GrpcStatus.RESOURCE_EXHAUSTED,
  415: GrpcStatus.INVALID_ARGUMENT,
  429: GrpcStatus.RESOURCE_EXHAUSTED,
  500: GrpcStatus.INTERNAL,
  503: GrpcStatus.UNAVAILABLE,
  504: GrpcStatus.DEADLINE_EXCEEDED,
};

/** What a failed call answers: the gRPC status, its message, and trailers carrying the error's stable code. */
export interface GrpcFailure {
  code: GrpcStatus;
  details: string;
  /** `edgecascade-error-code` (the family's `code`, e.g. `queue_full`), and `retry-after` where HTTP sends it. */
  trailers: Record<string, string>;
}

/**
 * A thrown value as a gRPC failure: a ServingError keeps its message, its code goes in the trailers; anything
 * else is an internal error, without its message (the caller logs it).
 */
export function grpcFailure(err: unknown): GrpcFailure {
  const known = asServingError(err);
  if (!known)
    return { code: GrpcStatus.INTERNAL, details: "internal error", trailers: { "edgecascade-error-code": "internal" } };
  const trailers: Record<string, string> = { "edgecascade-error-code": known.code };
  if (known.headers["retry-after"]) trailers["retry-after"] = known.headers["retry-after"];
  return { code: GRPC_STATUS_OF_HTTP[known.status] ?? GrpcStatus.UNKNOWN, details: known.message, trailers };
}

/** The failure as grpc-js's ServiceError shape (code, details, metadata), for a unary callback. */
export function serviceError(failure: GrpcFailure): { code: GrpcStatus; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(failure.trailers)) metadata.set(key, value);
  return { code: failure.code, details: failure.details, metadata };
}
