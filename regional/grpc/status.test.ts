import { status as GrpcStatus } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import {
  BadRequest,
  Conflict,
  DeadlineExceeded,
  Forbidden,
  MethodNotAllowed,
  NotFound,
  NotReady,
  PayloadTooLarge,
  RateLimited,
  type ServingError,
  Unauthorized,
  UnsupportedMediaType,
} from "../../protocol/errors.ts";
import { grpcFailure, serviceError } from "./status.ts";

describe("grpcFailure: the error family as gRPC statuses", () => {
  const cases: [ServingError, GrpcStatus][] = [
    [new BadRequest('input "x" is wrong'), GrpcStatus.INVALID_ARGUMENT],
    [new UnsupportedMediaType("text/plain"), GrpcStatus.INVALID_ARGUMENT],
    [new Unauthorized("no token"), GrpcStatus.UNAUTHENTICATED],
    [new Forbidden("outside the key's scope"), GrpcStatus.PERMISSION_DENIED],
    [new NotFound('unknown model "nope"'), GrpcStatus.NOT_FOUND],
    [new MethodNotAllowed("PUT", ["GET"]), GrpcStatus.UNIMPLEMENTED],
    [new Conflict("stale revision"), GrpcStatus.FAILED_PRECONDITION],
    [new PayloadTooLarge("batch of 5000 rows is over 1024"), GrpcStatus.RESOURCE_EXHAUSTED],
    [new RateLimited("the model's queue is full", 1, "queue_full"), GrpcStatus.RESOURCE_EXHAUSTED],
    [new NotReady("model loading"), GrpcStatus.UNAVAILABLE],
    [new DeadlineExceeded(), GrpcStatus.DEADLINE_EXCEEDED],
  ];
  it.each(cases)("%s answers its status with its message and code", (err, code) => {
    const failure = grpcFailure(err);
    expect(failure).toMatchObject({ code, details: err.message });
    expect(failure.trailers["edgecascade-error-code"]).toBe(err.code);
  });

  it("Retry-After travels as a trailer; a queue full and a batch too large differ by their code", () => {
    const full = grpcFailure(new RateLimited("the model's queue is full", 1, "queue_full"));
    expect(full.trailers).toEqual({ "edgecascade-error-code": "queue_full", "retry-after": "1" });
    expect(grpcFailure(new PayloadTooLarge("too big")).trailers).toEqual({
      "edgecascade-error-code": "payload_too_large",
    });
  });

  it("anything else is INTERNAL and never shows its message", () => {
    expect(grpcFailure(new Error("secret path /etc/x"))).toEqual({
      code: GrpcStatus.INTERNAL,
      details: "internal error",
      trailers: { "edgecascade-error-code": "internal" },
    });
  });

  it("serviceError puts the trailers in grpc-js Metadata", () => {
    const error = serviceError(grpcFailure(new NotFound("unknown model")));
    expect(error.code).toBe(GrpcStatus.NOT_FOUND);
    expect(error.metadata.get("edgecascade-error-code")).toEqual(["not_found"]);
  });
});
