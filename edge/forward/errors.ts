/**
 * Why a call to a region did not produce an answer. Each has a stable `code`; the layers decide on codes
 * (the breaker ignores `cancelled`, the degradation reason reads them), never on message text.
 */
export class RegionError extends Error {
  readonly code:
    | "breaker_open"
    | "timeout"
    | "budget_spent"
    | "too_far"
    | "cancelled"
    | "unavailable"
    | "status"
    | "model_unavailable"
    | "bad_answer"
    | "wrong_version"
    | "tenant_shed";
  readonly region: string;
  /** `tenant_shed`: how long to keep the tenant's requests from this region (regions/shed-backoff-policy.ts). */
  backoffMs?: number;

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
 * Not sent: the region is expected to answer later than what is left of the budget (edge/regions/reach.ts).
 * Being far is not failing: breakers and failure counters ignore it.
 */
export const tooFar = (region: string, expectedMs: number, budgetLeftMs: number) =>
  new RegionError(
    "too_far",
    region,
    `not sent: expected to answer in ${Math.round(expectedMs)} ms, ${budgetLeftMs} ms of the budget left`,
  );
/**
 * The client pinned a version this region does not serve (it answered 404, or with another version), as
 * during a rollout: try another region. The region itself is healthy, so its breaker ignores this.
 */
export const wrongVersion = (region: string, version: string, detail: string) =>
  new RegionError("wrong_version", region, `does not serve the pinned version ${version}: ${detail}`);
/**
 * The region answered that it does not serve this model now (503 `model_not_ready`: loading, or a version that
 * failed to load) while it serves its others: try another region. The region is healthy, so its breaker ignores
 * this; counting it would eject the region for every model because one of them is missing.
 */
export const modelUnavailable = (region: string, detail: string) =>
  new RegionError("model_unavailable", region, `does not serve the model now: ${detail}`);
/**
 * The region refused the request's tenant as best-effort under overload (429 `tenant_shed`: it serves reservations
 * first). The region is healthy, so its breaker ignores this, and no other region is asked: the tenant is over what
 * the pools take from it beside the reservations, and failing over would carry its flood to every region.
 */
export const tenantShed = (region: string, detail: string, backoffMs?: number) =>
  Object.assign(new RegionError("tenant_shed", region, `shed the request's tenant: ${detail}`), { backoffMs });
/** Another region answered first; this call was aborted. */
export const regionCancelled = (region: string) =>
  new RegionError("cancelled", region, "cancelled: another region answered first");

/** Every region was tried (or skipped) and none answered. */
export class NoRegionAnswered extends Error {
  readonly errors: readonly RegionError[];
  /** As `Forwarded.passedOver` (hedge.ts): of a call for any distance, the regions put behind as out of reach. */
  readonly passedOver: readonly string[];

  constructor(errors: readonly RegionError[], passedOver: readonly string[] = []) {
    super(
      errors.length === 0 ? "no regions configured" : `no region answered: ${errors.map((e) => e.message).join("; ")}`,
    );
    this.name = "NoRegionAnswered";
    this.errors = errors;
    this.passedOver = passedOver;
  }
}

/** The `x-edgecascade-degraded` value: why the answer is the edge model's although a region was wanted. */
export type DegradedReason = "no-regions" | "too-far" | "breakers-open" | "deadline" | "regions-failed" | "tenant-shed";

/** Why no region answered: the regions that could have answered in time say why they did not. */
export function degradedReason(errors: readonly RegionError[]): DegradedReason {
  const tried = errors.filter((e) => e.code !== "cancelled");
  if (tried.length === 0) return "no-regions";
  if (tried.some((e) => e.code === "tenant_shed")) return "tenant-shed";
  const reachable = tried.filter((e) => e.code !== "too_far");
  if (reachable.length === 0) return "too-far";
  if (reachable.every((e) => e.code === "breaker_open")) return "breakers-open";
  if (reachable.some((e) => e.code === "timeout" || e.code === "budget_spent")) return "deadline";
  return "regions-failed";
}
