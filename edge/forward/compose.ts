import { breaker } from "./breaker.ts";
import { deadline } from "./deadline.ts";
import { hedged } from "./hedge.ts";
import { observe } from "./observe.ts";
import { postToRegion } from "./post-to-region.ts";
import type { RegionBook } from "./region-book.ts";
import type { RegionTransport } from "./region-transport.ts";
import { signing } from "./sign.ts";
import { tenantBackoff } from "./tenant-backoff.ts";
import type { Interceptor, RegionDispatch } from "./types.ts";

export interface ForwarderOptions {
  book: RegionBook;
  sharedSecret: string | undefined;
  /** How each region is reached (region-transport.ts). */
  send: RegionTransport;
}

/**
 * The edge's call to the regions: one stack of small layers around fetch, outermost first.
 *
 *   hedged   across regions: nearest first, one hedge after the hedge delay, failover on error, the loser aborted;
 *            a region expected to answer later than what is left of the budget is skipped, never charged
 *            (unless the call is for any distance: `cascade: "regional"`, a model without an edge variant);
 *            a region that sheds the tenant ends the forward
 *   backoff  per region and tenant: none of a shed tenant's calls until the region's Retry-After is over
 *   breaker  per region: refuse while open, record how each admitted call ended
 *   observe  per region: count outcomes, keep answer latencies (they set the hedge delay)
 *   deadline x-edgecascade-deadline-ms = what is left of the SLO budget; abort when it runs out
 *   signing  HMAC over method, path, timestamp and body (innermost, so it signs what is sent)
 *   fetch    POST /v1/classify (through the region's binding, if it has one), check the answer
 *
 * The breaker sits outside observe and deadline so that a refused call is never timed (a deadline cut-off
 * is neutral to it: being slower than a budget is the reach estimate's business, not a failure); the hedge sits outside everything so that each region's call has its own breaker.
 */
export function createForwarder({ book, sharedSecret, send }: ForwarderOptions) {
  const perRegion = createRegionCall({ book, sharedSecret, send });
  const forward = hedged(perRegion, {
    delayMs: (region) => book.hedgeDelay(region.name),
    spendHedge: () => book.spendHedge(),
    onHedge: (region) => book.countHedge(region.name),
    expectedMs: (region, call) => book.expectedAnswerMs(region.name, call.location),
    onTooFar: (region) => book.countTooFar(region.name),
  });
  return (...args: Parameters<typeof forward>) => {
    book.earnHedge();
    return forward(...args);
  };
}

export type Forwarder = ReturnType<typeof createForwarder>;

/**
 * One region's call through the per-region layers (tenant backoff, breaker, observe, deadline, signing, fetch), without the
 * hedge: what the forwarder sends to each region, and what a warm probe sends (edge/forward/warm-probe.ts).
 */
export function createRegionCall({ book, sharedSecret, send }: ForwarderOptions): RegionDispatch {
  const layers: Interceptor[] = [tenantBackoff(book), breaker(book), observe(book), deadline, signing(sharedSecret)];
  return layers.reduceRight((next, layer) => layer(next), postToRegion(send));
}

/**
 * An audit's call to one region (edge/audit/): deadline, signing and fetch only. No hedge, and no breaker or
 * observe layer: an audit is no request, so it neither ejects a region nor feeds the answer times that steer
 * requests, and the region book's counts stay the requests' own.
 */
export function createAuditCall({ sharedSecret, send }: Omit<ForwarderOptions, "book">): RegionDispatch {
  return deadline(signing(sharedSecret)(postToRegion(send)));
}
