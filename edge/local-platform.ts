/**
 * The in-isolate stand-ins of `LOCAL_PLATFORM=memory` (edge/local/): the Cache API's `match`/`put`, the
 * rate-limiting binding and the Analytics Engine dataset, for the local stack, where Miniflare's simulations cost milliseconds Cloudflare does
 * not. The Worker imports them from `edgecascade-local-platform`, which the wrangler config build-edge.ts writes
 * points at edge/local/platform.ts in a local build and at this file in a deployed one: a deployed bundle has
 * none of edge/local/ (test/deploy/deploy-cli.test.ts reads the bundle).
 */
import type { StoredPoint } from "./analytics/figures.ts";

/** An Analytics Engine dataset kept in the isolate, whose points `/status` reads (Miniflare discards them). */
export interface ReadableAnalytics extends AnalyticsEngineDataset {
  /** The points kept, oldest first. */
  points(): StoredPoint[];
  /** Points written since the isolate started. */
  readonly written: number;
}

/** Whether `dataset` is the local stack's, which `/status` can read. */
export const isReadableAnalytics = (dataset: AnalyticsEngineDataset | undefined): dataset is ReadableAnalytics =>
  typeof (dataset as Partial<ReadableAnalytics> | undefined)?.points === "function";

export interface LocalPlatform {
  /** The Cache API's `match` and `put`, in the isolate. */
  cache(): Pick<Cache, "match" | "put">;
  /** A rate limiter of `limit` calls per key every `periodS` seconds, in the isolate. */
  rateLimit(limit: number, periodS: number): RateLimit;
  /** The Analytics Engine dataset, in the isolate. */
  analytics(): ReadableAnalytics;
}

/** A deployed bundle's: none. */
export const localPlatform: LocalPlatform | undefined = undefined;
