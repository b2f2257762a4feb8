/**
 * The reserve for the client's round trip: a request's budget (SLO_BUDGET_MS, or the client's
 * `x-edgecascade-budget-ms`) is the time the client waits, end to end. The edge starts counting when the request
 * reaches it, half a round trip after the client sent it, and its answer takes another half to get back; so
 * the regions get the budget less the client's round-trip time, and an answer the edge gives when that deadline
 * cuts a region off still reaches the client within the budget. Pure.
 */

/** The deadline the edge gives the regions for one request, and what it kept back for the client's round trip. */
export interface ForwardDeadline {
  /** Unix ms at which the edge stops waiting for the regions. */
  deadlineAt: number;
  /** Ms of the budget kept for the client's round trip (0: the regions may use the whole budget). */
  reserveMs: number;
  /** Whether the client's round trip was longer than the reserve may be (`maxShare` of the budget). */
  capped: boolean;
}

/**
 * The regions' deadline for a request that arrived at `startedAt` (Unix ms) with `budgetMs`: the budget less
 * the client's round-trip time `clientRttMs`, which takes at most `maxShare` of the budget, so the regions
 * always keep `(1 - maxShare) × budgetMs` however slow the client's link (the floor; such a client cannot be
 * answered within its budget anyway). An unknown round trip (undefined) reserves nothing: the budget then counts
 * at the edge. `maxShare` 0 turns the reserve off.
 *
 * `loadWaitMs` (LOAD_WAIT_MS) past that, for a request whose model the edge cannot answer without first creating
 * its session on the request path (an edge variant without a session in this isolate): no tier answers it within
 * the budget without such work, and a region that loads the model on demand answers it a load later (the pool
 * waits for a load when the deadline leaves room for one, regional/on-demand.ts) while the isolate's one thread,
 * which every request shares, stays free. Default 0.
 */
export function forwardDeadline(
  startedAt: number,
  budgetMs: number,
  clientRttMs: number | undefined,
  maxShare: number,
  loadWaitMs = 0,
): ForwardDeadline {
  const wantedMs = clientRttMs ?? 0;
  const maxMs = budgetMs * maxShare;
  const capped = wantedMs > maxMs;
  const reserveMs = capped ? maxMs : wantedMs;
  return { deadlineAt: startedAt + budgetMs - reserveMs + loadWaitMs, reserveMs, capped };
}

/** The parts of `request.cf` that give the client's round-trip time: one is set, by the connection's protocol. */
export interface CfRoundTrip {
  /** Smoothed TCP round-trip time to the client in ms, for HTTP/1 and HTTP/2 connections. */
  clientTcpRtt?: unknown;
  /** Smoothed QUIC round-trip time to the client in ms, for HTTP/3 connections. */
  clientQuicRtt?: unknown;
}

const positiveMs = (raw: unknown): number | undefined =>
  typeof raw === "number" && Number.isFinite(raw) && raw > 0 ? raw : undefined;

/**
 * The client's round-trip time to the colo in ms, as Cloudflare measured the connection: `clientTcpRtt` over
 * TCP, `clientQuicRtt` over QUIC (HTTP/3). The field of the other protocol is absent or 0, and so is either one
 * where nothing was measured (a request from another Worker, Miniflare's placeholder): 0 and anything that is
 * not a positive number read as unknown.
 */
export function clientRttMs(cf: CfRoundTrip | undefined): number | undefined {
  return positiveMs(cf?.clientTcpRtt) ?? positiveMs(cf?.clientQuicRtt);
}
