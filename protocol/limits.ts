/** Size limits on a request, checked before any inference runs. */
export interface RequestLimits {
  /** Largest accepted body in bytes. Default 262144 (256 KiB: 64 rows of 64 values written out generously). */
  maxBodyBytes: number;
  /** Most rows in one request. Default 64. The model's own `maxBatchSize` also applies. */
  maxBatch: number;
}

export const DEFAULT_LIMITS: Readonly<RequestLimits> = { maxBodyBytes: 256 * 1024, maxBatch: 64 };
