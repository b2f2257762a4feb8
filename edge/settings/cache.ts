import { defineTable } from "../../tools/cli/table.ts";

/** The response cache's two tiers (edge/cache/): how long an answer lives and how much the isolate keeps. */
export const CACHE_SETTINGS = defineTable({
  cacheTtlS: {
    env: "CACHE_TTL_S",
    type: "number",
    integer: true,
    min: 1,
    default: 300,
    unit: "s",
    help: "lifetime of a cached answer",
  },
  cacheEntries: {
    env: "CACHE_ENTRIES",
    type: "number",
    integer: true,
    min: 0,
    default: 10_000,
    unit: "entries",
    help: "most answers in the in-isolate cache",
  },
  cacheBytes: {
    env: "CACHE_BYTES",
    type: "number",
    integer: true,
    min: 0,
    default: 8 * 1024 * 1024,
    unit: "bytes",
    help: "most bytes of answers in the in-isolate cache (8 MiB)",
  },
});
