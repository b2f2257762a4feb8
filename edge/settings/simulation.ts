import { defineTable } from "../../tools/cli/table.ts";

/** Settings for local stacks and tests only, never a deployed Worker (docs/edge.md, *Simulation*). */
export const SIMULATION_SETTINGS = defineTable({
  allowLocationOverride: {
    env: "ALLOW_LOCATION_OVERRIDE",
    type: "boolean",
    simulation: true,
    help: "`x-edgecascade-location: <lat>,<lon>` stands in for `request.cf` (simulated client locations)",
  },
  localCacheOnly: {
    env: "LOCAL_CACHE_ONLY",
    type: "boolean",
    simulation: true,
    help: "answers stay in the isolate's LRU, never the Workers Cache API (local measurement runs)",
  },
  localPlatform: {
    env: "LOCAL_PLATFORM",
    type: "string",
    choices: ["memory"],
    defaultText: "unset",
    simulation: true,
    help: '"memory": in-isolate cache tier and rate limiter instead of the Cache API and RATE_LIMITER',
  },
  localRateLimit: {
    env: "LOCAL_RATE_LIMIT",
    type: "number",
    integer: true,
    min: 0,
    default: 0,
    unit: "requests",
    simulation: true,
    help: 'with LOCAL_PLATFORM "memory": requests per RATE_LIMIT_PERIOD_S per client (0: no limit)',
  },
  auditSeed: {
    env: "AUDIT_SEED",
    type: "number",
    integer: true,
    min: 0,
    defaultText: "unset",
    simulation: true,
    help: "a seed for the audit's draws: the same edge answers audited every run (tests); unset = Math.random",
  },
});
