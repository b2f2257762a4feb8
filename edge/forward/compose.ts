import { breaker } from "./breaker.ts";
import { deadline } from "./deadline.ts";
import { fetchRegion } from "./fetch-region.ts";
import { hedged } from "./hedge.ts";
import { observe } from "./observe.ts";
import type { RegionBook } from "./region-book.ts";
import type { RegionFetch } from "./region-fetch.ts";
import { signing } from "./sign.ts";
import type { Interceptor } from "./types.ts";

export interface ForwarderOptions {
  book: RegionBook;
  sharedSecret: string | undefined;
  /** How each region is reached (region-fetch.ts). */
  send: RegionFetch;
}

/**
 * The edge's call to the regions: one stack of small layers around fetch, outermost first.
 *
 *   hedged   across regions: nearest first, one hedge after the hedge delay, failover on error, the loser aborted;
 *            a region expected to answer later than what is left of the budget is skipped, never charged
 *   breaker  per region: refuse while open, record how each admitted call ended
 *   observe  per region: count outcomes, keep answer latencies (they set the hedge delay)
 *   deadline x-edgecascade-deadline-ms = what is left of the SLO budget; abort when it runs out
 *   signing  HMAC over method, path, timestamp and body (innermost, so it signs what is sent)
 *   fetch    POST /v1/classify (through the region's binding, if it has one), check the answer
 *
 * The breaker sits outside observe and deadline so that a timeout counts as a failure and a refused call
 * is never timed; the hedge sits outside everything so that each region's call has its own breaker.
 */
export function createForwarder({ book, sharedSecret, send }: ForwarderOptions) {
  const layers: Interceptor[] = [breaker(book), observe(book), deadline, signing(sharedSecret)];
  const perRegion = layers.reduceRight((next, layer) => layer(next), fetchRegion(send));
  const forward = hedged(perRegion, {
    delayMs: (region) => book.hedgeDelay(region.name),
    spendHedge: () => book.spendHedge(),
    onHedge: (region) => book.countHedge(region.name),
    expectedMs: (region) => book.expectedAnswerMs(region.name, Date.now()),
    onTooFar: (region) => book.countTooFar(region.name),
  });
  return (...args: Parameters<typeof forward>) => {
    book.earnHedge();
    return forward(...args);
  };
}

export type Forwarder = ReturnType<typeof createForwarder>;
