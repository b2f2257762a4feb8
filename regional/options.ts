import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isPublicKeyText } from "../protocol/model-signature.ts";

/** Execution provider request: `auto` tries CUDA and falls back to the CPU. */
export const EXECUTION_PROVIDERS = ["auto", "cuda", "cpu"] as const;
export type ExecutionProviderChoice = (typeof EXECUTION_PROVIDERS)[number];

/** `--version-delay-ms digits@2=20`: every run of digits version 2 waits 20 ms first. */
export interface VersionDelay {
  model: string;
  version: string;
  ms: number;
}

/** Bad option: the message names the flag and the environment variable. */
export class OptionError extends Error {}

/**
 * One row of the option table: where the value is read from, its default, and how a raw string becomes the
 * value. `--help`, the parser and the check of docs/regional.md's table all read these rows.
 */
export interface OptionSpec<T> {
  /** Flag without `--`; none for secrets, which are environment-only because flags show up in `ps`. */
  flag?: string;
  env: string;
  /** Placeholder for the value in `--help` and the docs (`P`, `MS`). */
  value: string;
  default: T;
  /** The default as docs/regional.md's table writes it (Markdown); `--help` shows it without backticks. */
  shownDefault: string;
  /** Unit of a number, shown after the default in `--help`. */
  unit?: "ms" | "µs" | "rows" | "requests";
  /** One line for `--help`. */
  help: string;
  /** The value from a non-empty raw string; throws an OptionError starting with `field` when it is bad. */
  parse(raw: string, field: string): T;
}

const option = <T>(spec: OptionSpec<T>): OptionSpec<T> => spec;

function integer(min: number, max: number): (raw: string, field: string) => number {
  return (raw, field) => {
    const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new OptionError(`${field} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  };
}

function oneOf<const T extends string>(allowed: readonly T[]): (raw: string, field: string) => T {
  return (raw, field) => {
    if (!(allowed as readonly string[]).includes(raw)) {
      throw new OptionError(`${field} must be one of ${allowed.join(", ")}, got "${raw}"`);
    }
    return raw as T;
  };
}

function matching(pattern: RegExp, what: string): (raw: string, field: string) => string {
  return (raw, field) => {
    if (!pattern.test(raw)) throw new OptionError(`${field} must be ${what}, got "${raw}"`);
    return raw;
  };
}

const asIs = (raw: string): string | undefined => raw;

/** What the pool serves and how: every option an operator sets. */
const SERVING_OPTIONS = {
  /** TCP port; 0 picks a free one. Default 8000 (Triton's HTTP port). */
  port: option({
    flag: "port",
    env: "REGIONAL_PORT",
    value: "P",
    default: 8000,
    shownDefault: "`8000`",
    help: "TCP port; 0 picks a free one",
    parse: integer(0, 65535),
  }),
  /**
   * Port of the gRPC service (Open Inference Protocol `inference.GRPCInferenceService` and
   * `grpc.health.v1.Health`), on the same interface; 0 picks a free one, undefined (`off`) serves no gRPC.
   * Default 8001 (Triton's gRPC port).
   */
  grpcPort: option<number | undefined>({
    flag: "grpc-port",
    env: "REGIONAL_GRPC_PORT",
    value: "P|off",
    default: 8001,
    shownDefault: "`8001`",
    help: "gRPC port (Open Inference Protocol); 0 picks a free one, off serves no gRPC",
    parse(raw, field) {
      if (raw.trim() === "off") return undefined;
      const n = /^\d{1,5}$/.test(raw.trim()) ? Number(raw) : Number.NaN;
      if (n <= 65535) return n;
      throw new OptionError(`${field} must be a port from 0 to 65535, or off, got "${raw}"`);
    },
  }),
  /** Interface to listen on. Default `0.0.0.0` (all IPv4 interfaces, as a container needs). */
  host: option({
    flag: "host",
    env: "REGIONAL_HOST",
    value: "ADDR",
    default: "0.0.0.0",
    shownDefault: "`0.0.0.0`",
    help: "interface to listen on",
    parse: matching(/^[\w.:-]+$/, "a host name or IP address"),
  }),
  /** Region name, answered as `servedBy: "regional:<region>"`. Default `local`. */
  region: option({
    flag: "region",
    env: "REGIONAL_REGION",
    value: "NAME",
    default: "local",
    shownDefault: "`local`",
    help: 'region name, answered as "regional:NAME"',
    parse: matching(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and '-' (e.g. us-east)"),
  }),
  /** Model repository (Triton layout). Default: the repository's `models/`. */
  modelsDir: option({
    flag: "models",
    env: "REGIONAL_MODELS",
    value: "DIR",
    default: fileURLToPath(new URL("../models/", import.meta.url)),
    shownDefault: "the repo's `models/`",
    help: "model repository, Triton layout",
    parse: matching(/\S/, "a directory"),
  }),
  /** Processes sharing the port (node:cluster). Default: `os.availableParallelism()`. */
  workers: option({
    flag: "workers",
    env: "REGIONAL_WORKERS",
    value: "N",
    default: availableParallelism(),
    shownDefault: "`os.availableParallelism()`",
    help: "processes sharing the port",
    parse: integer(1, 256),
  }),
  /** Default `auto`. */
  ep: option<ExecutionProviderChoice>({
    flag: "ep",
    env: "REGIONAL_EP",
    value: "auto|cuda|cpu",
    default: "auto",
    shownDefault: "`auto`",
    help: "execution provider; auto tries cuda, then cpu",
    parse: oneOf(EXECUTION_PROVIDERS),
  }),
  /** Most rows in one `session.run`, also capped by each model's `maxBatchSize`. Default 64. */
  maxBatch: option({
    flag: "max-batch",
    env: "REGIONAL_MAX_BATCH",
    value: "ROWS",
    default: 64,
    shownDefault: "`64`",
    unit: "rows",
    help: "most rows per session.run, capped by the model's maxBatchSize",
    parse: integer(1, 4096),
  }),
  /**
   * Microseconds a partial batch may wait for more rows once the model is busy (Triton's
   * `max_queue_delay_microseconds`). A request reaching an idle model never waits. Default 0.
   */
  maxQueueDelayUs: option({
    flag: "max-queue-delay-us",
    env: "REGIONAL_MAX_QUEUE_DELAY_US",
    value: "US",
    default: 0,
    shownDefault: "`0`",
    unit: "µs",
    help: "how long a partial batch may wait for more rows while the model is busy",
    parse: integer(0, 10_000_000),
  }),
  /** Requests waiting per model version before new ones are refused. Default 256. */
  maxQueue: option({
    flag: "max-queue",
    env: "REGIONAL_MAX_QUEUE",
    value: "N",
    default: 256,
    shownDefault: "`256`",
    unit: "requests",
    help: "requests waiting per model version before refusing",
    parse: integer(1, 1_000_000),
  }),
  /** Status for a full queue: 429 (with Retry-After) or 503, as Triton answers. Default 429. */
  queueFullStatus: option<429 | 503>({
    flag: "queue-full-status",
    env: "REGIONAL_QUEUE_FULL_STATUS",
    value: "429|503",
    default: 429,
    shownDefault: "`429`",
    help: "status for a full queue, with Retry-After either way",
    parse: (raw, field) => Number(oneOf(["429", "503"])(raw, field)) as 429 | 503,
  }),
  /**
   * Ed25519 public key (base64 of its 32 raw bytes) every model file must be signed with; a file unsigned or
   * signed otherwise is refused. Unset: unsigned models are served, and the pool says so loudly.
   */
  modelPublicKey: option<string | undefined>({
    flag: "model-public-key",
    env: "MODEL_PUBLIC_KEY",
    value: "KEY",
    default: undefined,
    shownDefault: "none",
    help: "serve only model files signed by this Ed25519 key (base64, from `npm run model -- keygen`); without one, unsigned models are served",
    parse(raw, field) {
      if (!isPublicKeyText(raw)) {
        throw new OptionError(
          `${field} must be an Ed25519 public key: base64 of 32 bytes, as \`npm run model -- keygen\` prints it`,
        );
      }
      return raw.trim();
    },
  }),
  /** Milliseconds between readiness turning false and the listener closing on SIGTERM. Default 0. */
  shutdownDelayMs: option({
    flag: "shutdown-delay-ms",
    env: "REGIONAL_SHUTDOWN_DELAY_MS",
    value: "MS",
    default: 0,
    shownDefault: "`0`",
    unit: "ms",
    help: "on SIGTERM, time between readiness turning false and closing the listener",
    parse: integer(0, 600_000),
  }),
  /** When set, inference requests must carry the edge's signature. Environment only. */
  sharedSecret: option({
    env: "REGIONAL_SHARED_SECRET",
    value: "SECRET",
    default: undefined,
    shownDefault: "unset",
    help: 'inference endpoints require the edge\'s HMAC signature (401 without); gRPC inference requires "authorization: Bearer <token>" metadata, the token being hex HMAC-SHA256("edgecascade-grpc-v1") with the secret (UNAUTHENTICATED without)',
    parse: asIs,
  }),
  /** When set, model control accepts `Authorization: Bearer <token>`; unset, it is refused. Environment only. */
  adminToken: option({
    env: "ADMIN_TOKEN",
    value: "TOKEN",
    default: undefined,
    shownDefault: "unset",
    help: 'model control requires "Authorization: Bearer <token>" (refused when unset)',
    parse: asIs,
  }),
};

/**
 * Settings that make the pool behave worse on purpose, for tests and local stacks: never for production.
 * Any of them set makes the pool log a warning at start (`simulationWarning`).
 */
const SIMULATION_OPTIONS = {
  /** Milliseconds every inference request waits before it is handled: simulated network distance. Default 0. */
  delayMs: option({
    flag: "delay-ms",
    env: "REGIONAL_DELAY_MS",
    value: "MS",
    default: 0,
    shownDefault: "`0`",
    unit: "ms",
    help: "every inference request waits this long first: simulated network distance",
    parse: integer(0, 600_000),
  }),
  /** Extra milliseconds every run of one model version takes (live and shadow), to make a slower candidate. */
  versionDelayMs: option<VersionDelay[]>({
    flag: "version-delay-ms",
    env: "REGIONAL_VERSION_DELAY_MS",
    value: "M@V=MS,...",
    default: [],
    shownDefault: "none",
    help: "every run of model M version V waits MS first, live or shadow: a slower rollout candidate",
    parse: (raw, field) =>
      raw
        .split(",")
        .filter((part) => part.trim() !== "")
        .map((part): VersionDelay => {
          const match = /^\s*([A-Za-z0-9_][\w.-]*)@(\d+)=(\d{1,6})\s*$/.exec(part);
          if (!match) {
            throw new OptionError(`${field} must be MODEL@VERSION=MS[,...] (e.g. digits@2=20), got "${part}"`);
          }
          return { model: match[1]!, version: match[2]!, ms: Number(match[3]) };
        }),
  }),
};

type Values<Table> = { [K in keyof Table]: Table[K] extends OptionSpec<infer T> ? T : never };

/** Everything a regional pool is started with. CLI flags win over environment variables. */
export type RegionalOptions = Values<typeof SERVING_OPTIONS> & {
  /** Test and local-stack settings (see `SIMULATION_OPTIONS`); their defaults simulate nothing. */
  simulation: Values<typeof SIMULATION_OPTIONS>;
};

/** Every option, in `--help` and docs order: serving, then simulation. */
export const OPTION_TABLE: readonly (OptionSpec<unknown> & { simulation: boolean })[] = [
  ...Object.values(SERVING_OPTIONS).map((spec) => ({ ...(spec as OptionSpec<unknown>), simulation: false })),
  ...Object.values(SIMULATION_OPTIONS).map((spec) => ({ ...(spec as OptionSpec<unknown>), simulation: true })),
];

function helpLine(spec: OptionSpec<unknown>): string {
  const shown = spec.shownDefault.replaceAll("`", "");
  const unit = spec.unit && /^\d+$/.test(shown) ? ` ${spec.unit}` : "";
  const flag = spec.flag ? `--${spec.flag} ${spec.value}` : "";
  return `  ${flag.padEnd(30)} ${spec.env.padEnd(28)} ${spec.help} (default ${shown}${unit})`;
}

export const HELP = `Usage: npm run regional -- [options]

The regional inference pool: /v1/classify, Open Inference Protocol v2 (HTTP, and gRPC on --grpc-port), /metrics.

Options (each also settable by the environment variable shown; flags win; secrets are environment-only):
${OPTION_TABLE.filter((s) => !s.simulation)
  .map(helpLine)
  .join("\n")}
  --help${" ".repeat(54)}print this and exit

Simulation, for tests and local stacks only (the pool warns at start when any is set):
${OPTION_TABLE.filter((s) => s.simulation)
  .map(helpLine)
  .join("\n")}

Signals: SIGHUP reloads every model from disk; SIGTERM/SIGINT drain and exit.
`;

export type ParsedCommandLine = { help: true } | { help: false; options: RegionalOptions };

/**
 * Options from the command line and the environment, validated once; the error names the field.
 * `--help` anywhere returns `{help: true}`. Empty environment values count as unset, so
 * `REGIONAL_SHARED_SECRET= npm run regional` runs without signatures.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        help: { type: "boolean" },
        ...Object.fromEntries(OPTION_TABLE.flatMap((s) => (s.flag ? [[s.flag, { type: "string" as const }]] : []))),
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new OptionError((err as Error).message);
  }
  if (values.help) return { help: true };

  /** The flag's value, else the environment's, else the default. */
  const read = <Table extends Record<string, OptionSpec<unknown>>>(table: Table): Values<Table> =>
    Object.fromEntries(
      Object.entries(table).map(([key, spec]) => {
        const fromFlag = spec.flag ? values[spec.flag] : undefined;
        const raw = typeof fromFlag === "string" ? fromFlag : env[spec.env] === "" ? undefined : env[spec.env];
        return [key, raw === undefined ? spec.default : spec.parse(raw, fieldName(spec))];
      }),
    ) as Values<Table>;

  const options: RegionalOptions = { ...read(SERVING_OPTIONS), simulation: read(SIMULATION_OPTIONS) };
  if (options.grpcPort !== undefined && options.grpcPort !== 0 && options.grpcPort === options.port) {
    throw new OptionError(
      `${fieldName(SERVING_OPTIONS.grpcPort)} must differ from ${fieldName(SERVING_OPTIONS.port)}: both are ${options.port}`,
    );
  }
  return { help: false, options };
}

function fieldName(spec: OptionSpec<unknown>): string {
  return spec.flag ? `--${spec.flag} (${spec.env})` : spec.env;
}

/** The loud start-up line when any simulation setting is on; undefined when none is. */
export function simulationWarning(simulation: RegionalOptions["simulation"]): string | undefined {
  const set = [
    simulation.delayMs > 0 ? `--delay-ms ${simulation.delayMs}` : undefined,
    simulation.versionDelayMs.length > 0
      ? `--version-delay-ms ${simulation.versionDelayMs.map((d) => `${d.model}@${d.version}=${d.ms}`).join(",")}`
      : undefined,
  ].filter((s) => s !== undefined);
  if (set.length === 0) return undefined;
  return `SIMULATION SETTINGS ON (${set.join(", ")}): answers are slowed on purpose; for tests and local stacks only, never in production`;
}
