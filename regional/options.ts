import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { isPublicKeyText } from "../protocol/model-signature.ts";
import { parseRegistryUrl } from "../protocol/registry/layout.ts";
import { wantsHelp } from "../tools/cli/command.ts";
import { UsageError } from "../tools/cli/errors.ts";
import { defineTable, type FlagValues, flagHelp, parseFlags, type SimulationKeys } from "../tools/cli/flags.ts";
import { parseTenantSpecs, type TenantSpec } from "./tenants/tenant-table.ts";

/** Execution provider request: `auto` tries CUDA and falls back to the CPU. */
export const EXECUTION_PROVIDERS = ["auto", "cuda", "cpu"] as const;
export type ExecutionProviderChoice = (typeof EXECUTION_PROVIDERS)[number];

/** `--version-delay-ms digits@2=20`: every run of digits version 2 waits 20 ms first. */
export interface VersionDelay {
  model: string;
  version: string;
  ms: number;
}

/** A value that must match `pattern`, described as `what` when it does not. */
const matching =
  (pattern: RegExp, what: string) =>
  (raw: string): string => {
    if (!pattern.test(raw)) throw new UsageError(`must be ${what}, got "${raw}"`);
    return raw;
  };

/** An http(s) URL. */
function httpUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new UsageError(`must be an http(s) URL, got "${raw}"`);
  }
  return raw.trim();
}

/** OTEL_TRACES_SAMPLER's values the pool takes (OpenTelemetry's names). */
export const TRACE_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/**
 * Every option of the pool, one row each (tools/cli/table.ts): its flag, its environment variable (a flag wins;
 * secrets have no flag, since flags show up in `ps`), default, unit and help. The parser, `--help`, the options'
 * types and docs/regional.md's tables (regional/options.test.ts) all come from it. The rows marked `simulation`
 * make the pool worse on purpose, for tests and local stacks, and are grouped apart (`options.simulation`).
 */
export const REGIONAL_OPTIONS = defineTable({
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
    default: fileURLToPath(new URL("../models/", import.meta.url)),
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
  /** Most rows in one `session.run`, also capped by each model's `maxBatchSize`. */
  maxBatch: {
    flag: "max-batch",
    env: "REGIONAL_MAX_BATCH",
    type: "number",
    integer: true,
    min: 1,
    max: 4096,
    default: 64,
    placeholder: "ROWS",
    unit: "rows",
    help: "most rows per session.run, capped by the model's maxBatchSize",
  },
  /**
   * Microseconds a partial batch may wait for more rows once the model is busy (Triton's
   * `max_queue_delay_microseconds`). A request reaching an idle model never waits.
   */
  maxQueueDelayUs: {
    flag: "max-queue-delay-us",
    env: "REGIONAL_MAX_QUEUE_DELAY_US",
    type: "number",
    integer: true,
    min: 0,
    max: 10_000_000,
    default: 0,
    placeholder: "US",
    unit: "µs",
    help: "how long a partial batch may wait for more rows while the model is busy",
  },
  /** Requests waiting per model version before new ones are refused. */
  maxQueue: {
    flag: "max-queue",
    env: "REGIONAL_MAX_QUEUE",
    type: "number",
    integer: true,
    min: 1,
    max: 1_000_000,
    default: 256,
    placeholder: "N",
    unit: "requests",
    help: "requests waiting per model version before refusing",
  },
  /**
   * Which models load without a request asking (regional/repository.ts): `all` loads every model at start and
   * keeps it; `on-demand` loads the pinned ones at start and every other on its first request, within
   * `--model-memory-mb`, evicting the least recently used; `auto` is `all` while every model's estimate fits the
   * budget, else `on-demand`.
   */
  loadPolicy: {
    flag: "load-policy",
    env: "REGIONAL_LOAD_POLICY",
    type: "string",
    choices: ["auto", "all", "on-demand"] as const,
    default: "auto",
    help: "all: every model at start; on-demand: pinned ones at start, the rest on first request within --model-memory-mb; auto: all while they fit the budget",
  },
  /** Models always loaded (in every worker) and never evicted under `on-demand`; each must be in the repository. */
  pinnedModels: {
    flag: "pinned-models",
    env: "REGIONAL_PINNED_MODELS",
    type: "list",
    placeholder: "M,...",
    defaultText: "none",
    help: "models loaded at start in every worker and never evicted (with on-demand)",
  },
  /**
   * Memory each worker's loaded models may be counted as under `on-demand` (the estimate of
   * regional/memory-budget.ts); a load past it first evicts the least recently used models.
   */
  modelMemoryMb: {
    flag: "model-memory-mb",
    env: "REGIONAL_MODEL_MEMORY_MB",
    type: "number",
    integer: true,
    min: 1,
    max: 1_048_576,
    default: 256,
    placeholder: "MB",
    unit: "MiB",
    help: "memory per worker for models loaded on demand; past it the least recently used are evicted",
  },
  /**
   * With `--workers` above 1 and models loaded on demand: `hashed` gives each model one owning worker (by
   * rendezvous hashing of its name), and the other workers hand its requests to that one; `every-worker` lets
   * each worker load what its own requests ask for. Pinned and explicitly loaded models are in every worker.
   */
  modelPlacement: {
    flag: "model-placement",
    env: "REGIONAL_MODEL_PLACEMENT",
    type: "string",
    choices: ["hashed", "every-worker"] as const,
    default: "hashed",
    help: "with --workers > 1 and on-demand: hashed (one owning worker per model, the others hand it requests) or every-worker",
  },
  /** Status for a full queue: 429 (with Retry-After) or 503, as Triton answers. */
  queueFullStatus: {
    flag: "queue-full-status",
    env: "REGIONAL_QUEUE_FULL_STATUS",
    type: "parsed",
    placeholder: "429|503",
    default: 429,
    help: "status for a full queue, with Retry-After either way",
    parse(raw): 429 | 503 {
      if (raw === "429" || raw === "503") return Number(raw) as 429 | 503;
      throw new UsageError(`must be 429 or 503, got "${raw}"`);
    },
  },
  /**
   * The pool's tenants (regional/tenants/): `NAME=guaranteed:ROWS_PER_S` reserves that many rows per second of the
   * pool for the edge tenant NAME; `NAME=best-effort[:WEIGHT]` shares what reservations leave, by weight. `direct`
   * (calls without a tenant: gRPC, direct API callers) and `other` (edge tenants not declared) are best-effort of
   * weight 1 unless declared.
   */
  tenants: {
    env: "REGIONAL_TENANTS",
    type: "parsed",
    placeholder: "T=CLASS[:N],...",
    default: [],
    defaultText: "none",
    help: "tenants: NAME=guaranteed:ROWS_PER_S (reserved) or NAME=best-effort[:WEIGHT], comma-separated; direct and other name the callers without a tenant and the undeclared ones",
    parse(raw): TenantSpec[] {
      try {
        return parseTenantSpecs(raw);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    },
  },
  /**
   * With tenants declared: the share of its deadline a best-effort request may expect to wait, in percent; the rest
   * is kept for reservations, so under overload best-effort work is refused first.
   */
  bestEffortWaitPercent: {
    flag: "best-effort-wait-percent",
    env: "REGIONAL_BEST_EFFORT_WAIT_PERCENT",
    type: "number",
    integer: true,
    min: 1,
    max: 100,
    default: 50,
    placeholder: "PCT",
    help: "with tenants: percent of its deadline a best-effort request may wait; the rest is kept for reservations",
  },
  /**
   * Ed25519 public key (base64 of its 32 raw bytes) every model file must be signed with; a file unsigned or
   * signed otherwise is refused. Unset: unsigned models are served, and the pool says so loudly.
   */
  modelPublicKey: {
    flag: "model-public-key",
    env: "MODEL_PUBLIC_KEY",
    type: "parsed",
    placeholder: "KEY",
    defaultText: "none",
    help: "serve only model files signed by this Ed25519 key (base64, from `npm run model -- keygen`); without one, unsigned models are served",
    parse(raw): string {
      if (!isPublicKeyText(raw)) {
        throw new UsageError(
          "must be an Ed25519 public key: base64 of 32 bytes, as `npm run model -- keygen` prints it",
        );
      }
      return raw.trim();
    },
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
  /** When set, inference requests must carry the edge's signature. Environment only. */
  sharedSecret: {
    flag: false,
    env: "REGIONAL_SHARED_SECRET",
    type: "string",
    placeholder: "SECRET",
    defaultText: "unset",
    help: 'inference endpoints require the edge\'s HMAC signature (401 without); gRPC inference requires "authorization: Bearer <token>" metadata, the token being hex HMAC-SHA256("edgecascade-grpc-v1") with the secret (UNAUTHENTICATED without)',
  },
  /** When set, model control accepts `Authorization: Bearer <token>`; unset, it is refused. Environment only. */
  adminToken: {
    flag: false,
    env: "ADMIN_TOKEN",
    type: "string",
    placeholder: "TOKEN",
    defaultText: "unset",
    help: 'model control requires "Authorization: Bearer <token>" (refused when unset)',
  },
  /**
   * The model registry this pool follows (regional/registry/): the served state of every model is read at start
   * and polled, each version's files are checked (sha256, signature) and kept in `--registry-cache`, and served
   * from there (`--models` is then unused). Needs `--model-public-key`: only signed files load from a registry.
   */
  registry: {
    flag: "registry",
    env: "REGIONAL_REGISTRY",
    type: "parsed",
    placeholder: "s3://BUCKET/PREFIX",
    defaultText: "none: serve --models",
    help: "follow this model registry (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, read-only); needs --model-public-key",
    parse(raw): string {
      try {
        parseRegistryUrl(raw);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      return raw.trim();
    },
  },
  /** An S3-compatible endpoint for the registry: R2, MinIO, GCS's interoperability endpoint, a local server. */
  registryEndpoint: {
    flag: "registry-endpoint",
    env: "AWS_ENDPOINT_URL_S3",
    type: "parsed",
    placeholder: "URL",
    defaultText: "AWS S3's",
    help: "the registry's S3-compatible endpoint (R2: https://<account>.r2.cloudflarestorage.com)",
    parse: matching(/^https?:\/\/[^\s/]+\/?$/, "an http(s) URL with no path"),
  },
  /** How often the pool reads the registry's served states; SIGHUP reads them at once. */
  registryPollMs: {
    flag: "registry-poll-ms",
    env: "REGIONAL_REGISTRY_POLL_MS",
    type: "number",
    integer: true,
    min: 100,
    max: 3_600_000,
    default: 10_000,
    placeholder: "MS",
    unit: "ms",
    help: "how often the served states are read from the registry (SIGHUP: at once)",
  },
  /** Where the files read from the registry are kept, checked, for the loads (an emptyDir in Kubernetes). */
  registryCache: {
    flag: "registry-cache",
    env: "REGIONAL_REGISTRY_CACHE",
    type: "string",
    placeholder: "DIR",
    defaultText: "a directory under the system's temporary one",
    help: "where checked files from the registry are kept for loading (one subdirectory per process)",
  },
  // Tracing (regional/tracing/): OpenTelemetry's own variables, read as its SDKs read them; environment only.
  // The OTLP exporter itself also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION and the certificate
  // variables (docs/observability.md).
  /** OTLP/HTTP base URL; traces go to `<url>/v1/traces` as protobuf. Unset, with the next unset: no tracing. */
  otlpEndpoint: {
    flag: false,
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    type: "parsed",
    placeholder: "URL",
    defaultText: "unset",
    help: "OTLP/HTTP collector; spans go to URL/v1/traces (protobuf). Unset, and no traces URL either: no tracing",
    parse: httpUrl,
  },
  /** The traces URL itself, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  otlpTracesEndpoint: {
    flag: false,
    env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    type: "parsed",
    placeholder: "URL",
    defaultText: "unset",
    help: "OTLP/HTTP traces URL, used as given (wins over the collector URL above)",
    parse: httpUrl,
  },
  /** `none` turns tracing off whatever the endpoint says. */
  tracesExporter: {
    flag: false,
    env: "OTEL_TRACES_EXPORTER",
    type: "string",
    choices: ["otlp", "none"] as const,
    default: "otlp",
    help: "none: no tracing, whatever the endpoint",
  },
  /**
   * Which requests are traced. The parent-based ones follow a caller's sampled flag (the edge's `traceparent`)
   * and apply the rest to requests without one. Default `parentbased_always_on`, OpenTelemetry's.
   */
  tracesSampler: {
    flag: false,
    env: "OTEL_TRACES_SAMPLER",
    type: "string",
    choices: TRACE_SAMPLERS,
    default: "parentbased_always_on",
    placeholder: "NAME",
    help: "which requests are traced; parentbased_* follow the caller's sampled flag",
  },
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  tracesSamplerArg: {
    flag: false,
    env: "OTEL_TRACES_SAMPLER_ARG",
    type: "number",
    min: 0,
    max: 1,
    default: 1,
    placeholder: "RATIO",
    help: "ratio of the traceidratio samplers (requests without a parent, for parentbased_traceidratio)",
  },
  /** `service.name` of the spans. */
  serviceName: {
    flag: false,
    env: "OTEL_SERVICE_NAME",
    type: "string",
    default: "edgecascade-regional",
    placeholder: "NAME",
    help: "service.name of the pool's spans",
  },
  /** `true` turns tracing off. */
  sdkDisabled: {
    flag: false,
    env: "OTEL_SDK_DISABLED",
    type: "boolean",
    help: "true: no tracing",
  },
  /** How long finished spans wait to be exported together (the batch span processor's delay). */
  spanExportDelayMs: {
    flag: false,
    env: "OTEL_BSP_SCHEDULE_DELAY",
    type: "number",
    integer: true,
    min: 1,
    max: 600_000,
    default: 5000,
    placeholder: "MS",
    unit: "ms",
    help: "longest a finished span waits before it is exported with others",
  },
  /** Finished spans kept while the collector is slow; more are dropped (never waited for). */
  spanQueueSize: {
    flag: false,
    env: "OTEL_BSP_MAX_QUEUE_SIZE",
    type: "number",
    integer: true,
    min: 1,
    max: 1_000_000,
    default: 2048,
    placeholder: "N",
    help: "finished spans kept for export; more are dropped, never waited for",
  },
  /** Milliseconds every inference request waits before it is handled: simulated network distance. */
  delayMs: {
    flag: "delay-ms",
    env: "REGIONAL_DELAY_MS",
    type: "number",
    integer: true,
    min: 0,
    max: 600_000,
    default: 0,
    placeholder: "MS",
    unit: "ms",
    simulation: true,
    help: "every inference request waits this long first: simulated network distance",
  },
  /**
   * Milliseconds every batch run waits before `session.run`, one run at a time: an accelerator whose batch latency
   * is fixed, so the pool's capacity is `--max-batch` rows per this (set by the device, not the shared CPU).
   */
  simulatedRunMs: {
    flag: "simulated-run-ms",
    env: "REGIONAL_SIMULATED_RUN_MS",
    type: "number",
    integer: true,
    min: 0,
    max: 10_000,
    default: 0,
    placeholder: "MS",
    unit: "ms",
    simulation: true,
    help: "every batch run waits this long first: a simulated accelerator whose capacity is --max-batch rows per MS",
  },
  /** Extra milliseconds every run of one model version takes (live and shadow), to make a slower candidate. */
  versionDelayMs: {
    flag: "version-delay-ms",
    env: "REGIONAL_VERSION_DELAY_MS",
    type: "parsed",
    placeholder: "M@V=MS,...",
    default: [],
    defaultText: "none",
    simulation: true,
    help: "every run of model M version V waits MS first, live or shadow: a slower rollout candidate",
    parse: (raw): VersionDelay[] =>
      raw
        .split(",")
        .filter((part) => part.trim() !== "")
        .map((part) => {
          const match = /^\s*([A-Za-z0-9_][\w.-]*)@(\d+)=(\d{1,6})\s*$/.exec(part);
          if (!match) throw new UsageError(`must be MODEL@VERSION=MS[,...] (e.g. digits@2=20), got "${part}"`);
          return { model: match[1]!, version: match[2]!, ms: Number(match[3]) };
        }),
  },
});

type OptionValues = FlagValues<typeof REGIONAL_OPTIONS>;
type Simulation = SimulationKeys<typeof REGIONAL_OPTIONS>;

/** Everything a regional pool is started with, typed from the table. CLI flags win over environment variables. */
export type RegionalOptions = Omit<OptionValues, Simulation> & {
  /** Test and local-stack settings (the table's `simulation` rows); their defaults simulate nothing. */
  simulation: Pick<OptionValues, Simulation>;
};

const isSimulation = (spec: { simulation?: true }) => spec.simulation === true;

export const HELP = `Usage: npm run regional -- [options]

The regional inference pool: /v1/classify, Open Inference Protocol v2 (HTTP, and gRPC on --grpc-port), /metrics.

Options (each also settable by the environment variable shown; flags win; secrets are environment-only):
${flagHelp(REGIONAL_OPTIONS, { rows: (spec) => !isSimulation(spec) })}

Simulation, for tests and local stacks only (the pool warns at start when any is set):
${flagHelp(REGIONAL_OPTIONS, { rows: isSimulation, helpLine: false })}

Signals: SIGHUP reloads every model from disk; SIGTERM/SIGINT drain and exit.
`;

export type ParsedCommandLine =
  | { help: true }
  | {
      help: false;
      options: RegionalOptions;
      /** The simulation settings that are on, as given (`simulationWarning` words the start-up line). */
      simulating: string[];
    };

/**
 * Options from the command line and the environment, validated once; a mistake throws a `UsageError` naming the
 * flag and the variable. `--help` anywhere returns `{help: true}`. Empty environment values count as unset, so
 * `REGIONAL_SHARED_SECRET= npm run regional` runs without signatures.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  if (wantsHelp(argv)) return { help: true };
  const { values, simulating } = parseFlags(REGIONAL_OPTIONS, argv, { env });
  const { delayMs, simulatedRunMs, versionDelayMs, ...serving } = values;
  const options: RegionalOptions = { ...serving, simulation: { delayMs, simulatedRunMs, versionDelayMs } };
  if (options.grpcPort !== undefined && options.grpcPort !== 0 && options.grpcPort === options.port) {
    throw new UsageError(
      `--grpc-port (REGIONAL_GRPC_PORT) must differ from --port (REGIONAL_PORT): both are ${options.port}`,
    );
  }
  if (options.registry !== undefined && options.modelPublicKey === undefined) {
    throw new UsageError(
      "--registry (REGIONAL_REGISTRY) needs --model-public-key (MODEL_PUBLIC_KEY): only signed files load from a registry",
    );
  }
  return { help: false, options, simulating };
}
