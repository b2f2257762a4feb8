import type { LocalPlatform } from "../local-platform.ts";
import { MemoryAnalytics } from "./memory-analytics.ts";
import { MemoryCache } from "./memory-cache.ts";
import { MemoryRateLimit } from "./memory-rate-limit.ts";

/** A local build's stand-ins (edge/local-platform.ts says how they reach the Worker, and why only there). */
export const localPlatform: LocalPlatform | undefined = {
  cache: () => new MemoryCache(),
  rateLimit: (limit, periodS) => new MemoryRateLimit(limit, periodS),
  analytics: () => new MemoryAnalytics(),
};
