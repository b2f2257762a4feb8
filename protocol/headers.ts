/** Header names shared by the edge, the regional pools and the scripts. */

/** Unix time in seconds at which the edge signed a call to a region. */
export const TIMESTAMP_HEADER = "x-edgecascade-timestamp";
/** Hex HMAC-SHA256 of the signed call (see signing.ts). */
export const SIGNATURE_HEADER = "x-edgecascade-signature";
/** Milliseconds the caller still waits for this answer, counted from when the region receives it. */
export const DEADLINE_HEADER = "x-edgecascade-deadline-ms";
/** Which tier answered: cache, edge, regional:<name> or degraded. */
export const SERVED_BY_HEADER = "x-served-by";
/** Version of the model that produced the answer. */
export const MODEL_VERSION_HEADER = "x-model-version";
/** Set on degraded answers: why the regional answer is missing. */
export const DEGRADED_HEADER = "x-edgecascade-degraded";
/** On regional answers of a model that has had a rollout: its state as the edge needs it (rollout/header.ts). */
export const ROLLOUT_HEADER = "x-edgecascade-rollout";
/**
 * `1` on a request that only warms a stack's request paths (npm start's warm-up): the edge answers it, but keeps
 * its region calls' times out of what it expects of the regions.
 */
export const WARM_UP_HEADER = "x-edgecascade-warm-up";
/**
 * On a pool's answer that waited for its model to load on demand: how long it waited, in ms. The edge keeps that
 * answer's time out of its reach evidence: it measured the load, not how far the region is.
 */
export const MODEL_LOAD_HEADER = "x-edgecascade-model-load-ms";
/**
 * On a forward: the edge tenant whose request it is (`acme`, `key:<digest>`, `anonymous`), covered by the call's
 * signature (signing.ts). Pools serve and count by it (regional/tenants/); calls without it are `direct`.
 */
export const TENANT_HEADER = "x-edgecascade-tenant";
/**
 * On an edge answer served while the tenant's global quota could not be checked (its Durable Object unreachable:
 * the edge fails open): `unmetered`. Absent otherwise. The synthetic probe counts these (tools/probe/).
 */
export const QUOTA_HEADER = "x-edgecascade-quota";
/** W3C Trace Context: the caller's span (protocol/trace-context.ts); the edge forwards it to the regions. */
export const TRACEPARENT_HEADER = "traceparent";
/** W3C Trace Context: vendors' state, passed on with `traceparent` when well formed. */
export const TRACESTATE_HEADER = "tracestate";
/**
 * On an audit (an edge answer re-asked of a region, off the request path): the edge's label per row
 * (protocol/audit.ts). The region counts whether it agrees and keeps the call out of its request metrics.
 */
export const AUDIT_HEADER = "x-edgecascade-audit";
