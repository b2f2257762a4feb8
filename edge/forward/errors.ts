/**
 * Why a call to a region did not produce an answer. Each has a stable `code`; the layers decide on codes
 * (the breaker ignores `cancelled`, the degradation reason reads them), never on message text.
 */
export class RegionError extends Error {
  readonly code: "breaker_open" | "timeout" | "cancelled" | "unavailable" | "status" | "bad_answer";
  readonly region: string;

  constructor(code: RegionError["code"], region: string, message: string, options?: { cause?: unknown }) {
    super(`region ${region}: ${message}`, options);
    this.name = "RegionError";
    this.code = code;
    this.region = region;
  }
}

/** The breaker refused the call; nothing was sent. */
export const breakerOpen = (region: string) => new RegionError("breaker_open", region, "circuit breaker open");
/** The request's budget ran out before the region answered (or before the call could start). */
export const regionTimeout = (region: string, budgetMs: number) =>
  new RegionError("timeout", region, `no answer within the remaining budget of ${budgetMs} ms`);
/** Another region answered first; this call was aborted. */
export const regionCancelled = (region: string) =>
  new RegionError("cancelled", region, "cancelled: another region answered first");

/** Every region was tried (or skipped) and none answered. */
export class NoRegionAnswered extends Error {
  readonly errors: readonly RegionError[];

  constructor(errors: readonly RegionError[]) {
    super(
      errors.length === 0 ? "no regions configured" : `no region answered: ${errors.map((e) => e.message).join("; ")}`,
    );
    this.name = "NoRegionAnswered";
    this.errors = errors;
  }
}

/** The `x-edgecascade-degraded` value: why the answer is the edge model's although a region was wanted. */
export type DegradedReason = "no-regions" | "breakers-open" | "deadline" | "regions-failed";

export function degradedReason(errors: readonly RegionError[]): DegradedReason {
  const tried = errors.filter((e) => e.code !== "cancelled");
  if (tried.length === 0) return "no-regions";
  if (tried.every((e) => e.code === "breaker_open")) return "breakers-open";
  if (tried.some((e) => e.code === "timeout")) return "deadline";
  return "regions-failed";
}
