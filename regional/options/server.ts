import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";
import { matching } from "./matching.ts";

/** Execution provider request: `auto` tries CUDA and falls back to the CPU. */
export const EXECUTION_PROVIDERS = ["auto", "cuda", "cpu"] as const;
export type ExecutionProviderChoice = (typeof EXECUTION_PROVIDERS)[number];

/** Where the pool listens, what it serves from, with how many processes, and how it stops. */
export const SERVER_OPTIONS = defineTable({
  port: {
    env: "REGIONAL_PORT",
    type: "number",
    integer: true,
    min: 0,
    max: 65535,
    default: 8000,
    placeholder: "P",
    help: "TCP port; 0 picks a free one",
  },
  /**
   * Port of the gRPC service (Open Inference Protocol `inference.GRPCInferenceService` and
   * `grpc.health.v1.Health`), on the same interface; 0 picks a free one, undefined (`off`) serves no gRPC.
   * Default 8001 (Triton's gRPC port).
   */
  grpcPort: {
    flag: "grpc-port",
    env: "REGIONAL_GRPC_PORT",
    type: "parsed",
    placeholder: "P|off",
    default: 8001,
    help: "gRPC port (Open Inference Protocol); 0 picks a free one, off serves no gRPC",
    parse(raw): number | undefined {
      if (raw.trim() === "off") return undefined;
      const n = /^\d{1,5}$/.test(raw.trim()) ? Number(raw) : Number.NaN;
      if (n <= 65535) return n;
      throw new UsageError(`must be a port from 0 to 65535, or off, got "${raw}"`);
    },
  },
  /** Interface to listen on. Default `0.0.0.0` (all IPv4 interfaces, as a container needs). */
  host: {
    env: "REGIONAL_HOST",
    type: "parsed",
    placeholder: "ADDR",
    default: "0.0.0.0",
    help: "interface to listen on",
    parse: matching(/^[\w.:-]+$/, "a host name or IP address"),
  },
  /** Region name, answered as `servedBy: "regional:<region>"`. */
  region: {
    env: "REGIONAL_REGION",
    type: "parsed",
    placeholder: "NAME",
    default: "local",
    help: 'region name, answered as "regional:NAME"',
    parse: matching(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and '-' (e.g. us-east)"),
  },
  /** Model repository (Triton layout). */
  modelsDir: {
    flag: "models",
    env: "REGIONAL_MODELS",
    type: "parsed",
    placeholder: "DIR",
    default: fileURLToPath(new URL("../../models/", import.meta.url)),
    defaultText: "the repo's `models/`",
    help: "model repository, Triton layout",
    parse: matching(/\S/, "a directory"),
  },
  /** Processes sharing the port (node:cluster). */
  workers: {
    env: "REGIONAL_WORKERS",
    type: "number",
    integer: true,
    min: 1,
    max: 256,
    default: availableParallelism(),
    defaultText: "`os.availableParallelism()`",
    placeholder: "N",
    help: "processes sharing the port",
  },
  ep: {
    env: "REGIONAL_EP",
    type: "string",
    choices: EXECUTION_PROVIDERS,
    default: "auto",
    help: "execution provider; auto tries cuda, then cpu",
  },
  /** Milliseconds between readiness turning false and the listener closing on SIGTERM. */
  shutdownDelayMs: {
    flag: "shutdown-delay-ms",
    env: "REGIONAL_SHUTDOWN_DELAY_MS",
    type: "number",
    integer: true,
    min: 0,
    max: 600_000,
    default: 0,
    placeholder: "MS",
    unit: "ms",
    help: "on SIGTERM, time between readiness turning false and closing the listener",
  },
});
