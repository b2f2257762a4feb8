import { describe, expect, it } from "vitest";
import {
  BadRequest,
  Conflict,
  DeadlineExceeded,
  errorBody,
  errorStatus,
  MethodNotAllowed,
  ModelNotReady,
  NotFound,
  NotReady,
  PayloadTooLarge,
  RateLimited,
  Unauthorized,
  UnsupportedMediaType,
} from "./errors.ts";

describe("error family", () => {
  it.each([
    [new BadRequest("bad"), 400, "bad_request", {}],
    [new Unauthorized(), 401, "unauthorized", { "www-authenticate": "Bearer" }],
    [new NotFound("no model"), 404, "not_found", {}],
    [new MethodNotAllowed("GET", ["POST"]), 405, "method_not_allowed", { allow: "POST" }],
    [new Conflict("rollout running"), 409, "conflict", {}],
    [new PayloadTooLarge("big"), 413, "payload_too_large", {}],
    [new UnsupportedMediaType("text/plain"), 415, "unsupported_media_type", {}],
    [new RateLimited("slow down", 0.2), 429, "rate_limited", { "retry-after": "1" }],
    [new RateLimited("queue full", 2.5, "queue_full"), 429, "queue_full", { "retry-after": "3" }],
    [new NotReady("loading"), 503, "not_ready", {}],
    [new NotReady("draining", 5), 503, "not_ready", { "retry-after": "5" }],
    [new ModelNotReady("loading", 1), 503, "model_not_ready", { "retry-after": "1" }],
    [new DeadlineExceeded(), 504, "deadline_exceeded", {}],
  ])("%s -> %i %s", (err, status, code, headers) => {
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.headers).toEqual(headers);
    expect(errorStatus(err)).toBe(status);
    expect(errorBody(err)).toEqual({ error: err.message, code });
    expect(err.name).toBe(err.constructor.name);
  });

  it("answers unknown errors as 500 without their message", () => {
    const err = new TypeError("secret internals at /srv/app.ts:12");
    expect(errorStatus(err)).toBe(500);
    expect(errorBody(err)).toEqual({ error: "internal error", code: "internal" });
  });
});
