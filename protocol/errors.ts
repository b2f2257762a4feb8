/**
 * The error family every tier answers with. Each class carries its HTTP status and a stable `code`;
 * callers branch on `code` or `status`, never on message text. One `onError` per app turns them into
 * `{"error": message, "code": code}` (see `errorBody`).
 */
export class ServingError extends Error {
  readonly status: number;
  readonly code: string;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** A member of the family whose one argument is its message: status and code fixed. */
function withMessage(status: number, code: string) {
  return class extends ServingError {
    constructor(message: string) {
      super(status, code, message);
    }
  };
}

/** `Retry-After` in whole seconds (RFC 9110 takes no fractions), at least 1; none without a wait. */
function retryAfter(seconds: number | undefined): Record<string, string> {
  return seconds ? { "retry-after": String(Math.max(1, Math.ceil(seconds))) } : {};
}

/** 400: the request is malformed (invalid JSON, wrong fields, shapes or values). */
export class BadRequest extends withMessage(400, "bad_request") {}

/** 401: missing or invalid credentials (API key, edge signature, admin token). */
export class Unauthorized extends ServingError {
  constructor(message = "missing or invalid credentials") {
    super(401, "unauthorized", message, { "www-authenticate": "Bearer" });
  }
}

/** 403: the credentials are valid but do not cover this request (an API key calling a model outside its scope). */
export class Forbidden extends withMessage(403, "forbidden") {}

/** 404: unknown route, model or version. */
export class NotFound extends withMessage(404, "not_found") {}

/** 405: the route exists but not for this method. */
export class MethodNotAllowed extends ServingError {
  constructor(method: string, allowed: readonly string[]) {
    super(405, "method_not_allowed", `method ${method} not allowed; use ${allowed.join(", ")}`, {
      allow: allowed.join(", "),
    });
  }
}

/** 409: the request conflicts with the server's state (a model load during its rollout, a stale rollout revision). */
export class Conflict extends withMessage(409, "conflict") {}

/** 413: the body or the batch is over the configured limit (body-limit.ts writes the body's). */
export class PayloadTooLarge extends ServingError {
  constructor(message: string, headers: Record<string, string> = {}) {
    super(413, "payload_too_large", message, headers);
  }
}

/** 415: the body is not of a type the route reads (`accepted`, default application/json). */
export class UnsupportedMediaType extends ServingError {
  constructor(contentType: string | null | undefined, accepted = "application/json") {
    super(
      415,
      "unsupported_media_type",
      contentType ? `content-type must be ${accepted}, got ${contentType}` : `content-type must be ${accepted}`,
    );
  }
}

/** 429: rate limit or full queue; `Retry-After` says when to come back (whole seconds, at least 1). */
export class RateLimited extends ServingError {
  readonly retryAfterS: number;
  constructor(message: string, retryAfterS: number, code = "rate_limited") {
    const seconds = Math.max(1, Math.ceil(retryAfterS));
    super(429, code, message, { "retry-after": String(seconds) });
    this.retryAfterS = seconds;
  }
}

/** 503: not ready (model loading, draining) or a full queue where 503 is configured. */
export class NotReady extends ServingError {
  constructor(message: string, retryAfterS?: number) {
    super(503, "not_ready", message, retryAfter(retryAfterS));
  }
}

/**
 * 503: this model does not serve in this pool (loading, failed to load, unloaded) while the pool serves its
 * other models. A code of its own so that a caller (the edge) can tell it from a pool that is not ready at all:
 * the pool is healthy, another region may serve the model.
 */
export class ModelNotReady extends ServingError {
  constructor(message: string, retryAfterS?: number) {
    super(503, "model_not_ready", message, retryAfter(retryAfterS));
  }
}

/** 504: the request's deadline passed before it could be answered. */
export class DeadlineExceeded extends ServingError {
  constructor(message = "deadline exceeded before the request could run") {
    super(504, "deadline_exceeded", message);
  }
}

/** The JSON body of an error response. Unknown errors never leak their message or stack. */
export function errorBody(err: unknown): { error: string; code: string } {
  if (err instanceof ServingError) return { error: err.message, code: err.code };
  return { error: "internal error", code: "internal" };
}

/** Status for any thrown value: the ServingError's own, else 500. */
export function errorStatus(err: unknown): number {
  return err instanceof ServingError ? err.status : 500;
}
