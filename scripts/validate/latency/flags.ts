/**
 * validate:latency's flags (scripts/validate/latency.ts).
 */
import { FLOOR_MS } from "../../../edge/regions/prior.ts";
import type { FlagTable } from "../../../tools/cli/flags.ts";
import { MODEL_FLAG, OUT_FLAG } from "../../run-flags.ts";
import { CLIENT_LOCATIONS } from "../distance.ts";

const LOCATION_NAMES = CLIENT_LOCATIONS.map((l) => l.name);

export const FLAGS = {
  model: MODEL_FLAG,
  rate: { type: "number", placeholder: "R", default: 100, min: 1, help: "requests per second per run, open loop" },
  duration: { type: "number", placeholder: "S", default: 20, min: 1, help: "seconds per client location" },
  locations: {
    type: "list",
    placeholder: "LIST",
    choices: LOCATION_NAMES,
    default: LOCATION_NAMES,
    defaultText: "all",
    help: LOCATION_NAMES.join(","),
  },
  thresholds: {
    type: "list",
    placeholder: "LIST",
    default: ["0.3", "0.5", "calibrated", "0.8", "0.9", "0.95", "0.99"],
    help: 'cascade thresholds for the trade-off; "calibrated" is the model\'s ("none" skips the trade-off)',
  },
  "tradeoff-location": {
    type: "string",
    placeholder: "L",
    choices: LOCATION_NAMES,
    default: "frankfurt",
    help:
      "where the trade-off runs are sent from (frankfurt: a region is in reach of the budget; from\n" +
      "new-york none is, and every threshold forwards nothing)",
  },
  "tradeoff-duration": { type: "number", placeholder: "S", default: 10, min: 1, help: "seconds per threshold" },
  "budget-ms": {
    type: "number",
    placeholder: "MS",
    default: 10,
    min: 1,
    help: "the edge's SLO_BUDGET_MS and the p95 target",
  },
  "client-rtt-ms": {
    type: "number",
    placeholder: "MS",
    default: 2 * FLOOR_MS,
    min: 0,
    help:
      "the client's round trip the edge is told, as Cloudflare's request.cf.clientTcpRtt (0: none,\n" +
      "the budget counts at the edge); default: a client next to its colo by the distance model\n" +
      "(its 1 ms each way at 0 km)",
  },
  "jitter-ms": {
    type: "number",
    placeholder: "MS",
    default: 0.5,
    help: "± jitter of every one-way delay (0: the simulated network without jitter)",
  },
  "reach-quantile": {
    type: "number",
    placeholder: "Q",
    max: 1,
    defaultText: "the edge's, 0.9",
    help: "the edge's REACH_QUANTILE",
  },
  distinct: {
    type: "number",
    placeholder: "N",
    default: 100_000,
    min: 1,
    integer: true,
    defaultText: "100000",
    help: "distinct inputs in the Zipf population",
  },
  "zipf-s": { type: "number", placeholder: "S", default: 1, help: "Zipf exponent" },
  seed: { type: "number", placeholder: "N", default: 1, integer: true, help: "traffic seed" },
  cold: {
    type: "boolean",
    help:
      "no warm-up: each location's fresh Worker first takes one request of each kind (a row\n" +
      "the edge is sure of, one it is unsure of, the second model's), one after another, each\n" +
      "reported with latency and workerd CPU beside the run's warm ones (docs/edge.md)",
  },
  floors: {
    type: "string",
    placeholder: "BOOL",
    choices: ["true", "false"],
    default: "true",
    help:
      "also measure, in the same run, the same rate against a hello-world Worker and a no-op\n" +
      "Node server, before and after the locations",
  },
  decompose: {
    type: "boolean",
    help:
      "before each location, the forward path piece by piece at the same rate: its nearest\n" +
      "pool answering directly, the same pool through its delay proxy, and a no-op server\n" +
      "directly and through a delay proxy of the same delay and jitter (the proxy alone)",
  },
  "decompose-duration": {
    type: "number",
    placeholder: "S",
    default: 5,
    min: 1,
    max: 25,
    help: "seconds per piece of --decompose (a piece's signature holds 30 s)",
  },
  proxies: {
    type: "string",
    placeholder: "WHERE",
    choices: ["apart", "in-process"],
    default: "apart",
    help:
      "where the delay proxies run: apart (their own process, so that the load generator's work\n" +
      "and GC do not hold back the distance they simulate) or in-process (this one, as before)",
  },
  "busy-cores": {
    type: "number",
    placeholder: "N",
    default: 0,
    max: 8,
    integer: true,
    help: "keep N other processes spinning on the CPU throughout (the machine with busy cores)",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;
