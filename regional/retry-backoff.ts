/**
 * How long readiness checks wait before loading a model again after its loads failed. A load reads and
 * hashes the file, creates a session, warms it up and runs the fixture: with readiness probes every 2 s in every
 * worker, retrying on each would repeat that for as long as the model stays broken.
 */
export interface RetryBackoff {
  /** Milliseconds after the first failure. */
  initialMs: number;
  /** Most milliseconds between attempts, however many failed. */
  maxMs: number;
}

/** 1 s after the first failure, doubling with each further one, at most 30 s. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { initialMs: 1_000, maxMs: 30_000 };

/** Milliseconds to wait after `failures` consecutive failed loads: `initialMs`, doubled per failure, capped. */
export function retryDelayMs(failures: number, backoff: RetryBackoff): number {
  if (failures <= 0) return 0;
  // The exponent is bounded so that a long outage never computes Infinity (0 * Infinity would be NaN).
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures - 1, 30));
}
