/**
 * Why a call to a region did not produce an answer. Each has a stable `code`; the layers decide on codes
 * (the breaker ignores `cancelled`, the degradation reason reads them), never on message text.
 */
export class RegionError extends Error {
  readonly code:
    | "breaker_open"
    | "timeout"
    | "budget_spent"
    | "cancelled"
    | "unavailable"
    | "status"
    | "bad_answer"
    | "wrong_version";
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
/** The request's budget ran out before the region answered. */
export const regionTimeout = (region: string, budgetMs: number) =>
  new RegionError("timeout", region, `no answer within the remaining budget of ${budgetMs} ms`);
/**
 * The request's budget was spent before this region's turn; nothing was sent. It says nothing about the
 * region: breakers and counters ignore it (else every region after a slow one would be charged a timeout).
 */
export const budgetSpent = (region: string) =>
  new RegionError("budget_spent", region, "not sent: the SLO budget was already spent");
/**
 * The client pinned a version this region does not serve (it answered 404, or with another version), as
 * during a rollout: try another region. The region itself is healthy, so its breaker ignores this.
 */
export const wrongVersion = (region: string, version: string, detail: string) =>
  new RegionError("wrong_version", region, `does not serve the pinned version ${version}: ${detail}`);
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
  if (tried.some((e) => e.code === "timeout" || e.code === "budget_spent")) return "deadline";
  return "regions-failed";
}
