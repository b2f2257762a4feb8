import type { FlagTable } from "../../../tools/cli/flags.ts";
import { MODEL_FLAG, OUT_FLAG } from "../../run-flags.ts";

/** bench:edge's flags (scripts/benchmarks/edge.ts). */
export const EDGE_BENCH_FLAGS = {
  connections: {
    type: "number",
    placeholder: "N",
    default: 32,
    min: 1,
    integer: true,
    help: "requests in flight, closed loop",
  },
  duration: {
    type: "number",
    placeholder: "S",
    default: 2,
    min: 1,
    help: "seconds of each closed loop (req/s, CPU)",
  },
  "latency-duration": {
    type: "number",
    placeholder: "S",
    default: 2,
    min: 1,
    help: "seconds of each open loop (latency)",
  },
  rate: { type: "number", placeholder: "R", default: 200, min: 1, help: "requests per second, open loop" },
  warmup: { type: "number", placeholder: "S", default: 0.5, help: "seconds of warm-up before each run" },
  rounds: { type: "number", placeholder: "N", default: 5, min: 1, integer: true, help: "interleaved rounds" },
  "forward-rounds": {
    type: "number",
    placeholder: "N",
    default: 3,
    min: 1,
    integer: true,
    help: "rounds of the forward overhead",
  },
  out: OUT_FLAG,
  model: MODEL_FLAG,
  pin: {
    type: "string",
    choices: ["on", "off"],
    default: "on",
    help: "workerd on core 0, the load generator and the pool on core 1 (taskset; unpinned where absent)",
  },
  "cache-api": {
    type: "string",
    choices: ["off", "on", "both"],
    default: "both",
    help: "Miniflare's Cache API simulation for both Workers",
  },
  socket: {
    type: "string",
    choices: ["entry", "direct", "both"],
    default: "both",
    help: "reach the Workers through Miniflare's entry Worker, straight (unsafeDirectSockets), or both",
  },
} as const satisfies FlagTable;
