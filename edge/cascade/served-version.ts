/**
 * The version of the full model the edge believes the regions serve. It only moves forward: it starts at
 * the version the edge model was calibrated against and rises when a region answers with (or the region status check sees)
 * a higher one, so a rolling regional upgrade never sends the cache key back to an older version.
 */
export function newerVersion(current: string, seen: string | null | undefined): string {
  if (!seen || !/^\d+$/.test(seen)) return current;
  return BigInt(seen) > BigInt(current) ? seen : current;
}
