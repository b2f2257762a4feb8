import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isPublicKeyText } from "../protocol/model-signature.ts";

/** Execution provider request: `auto` tries CUDA and falls back to the CPU. */
export const EXECUTION_PROVIDERS = ["auto", "cuda", "cpu"] as const;
export type ExecutionProviderChoice = (typeof EXECUTION_PROVIDERS)[number];

/** Everything a regional pool is started with. CLI flags win over environment variables. */
export interface RegionalOptions {
  /** TCP port; 0 picks a free one. Default 8000 (Triton's HTTP port). */
  port: number;
  /**
   * Port of the gRPC service (Open Inference Protocol `inference.GRPCInferenceService` and
   * `grpc.health.v1.Health`), on the same interface; 0 picks a free one, undefined (`off`) serves no gRPC.
   * Default 8001 (Triton's gRPC port).
   */
  grpcPort: number | undefined;
  /** Interface to listen on. Default `0.0.0.0` (all IPv4 interfaces, as a container needs). */
  host: string;
  /** Region name, answered as `servedBy: "regional:<region>"`. Default `local`. */
  region: string;
  /** Model repository (Triton layout). Default: the repository's `models/`. */
  modelsDir: string;
  /** Processes sharing the port (node:cluster). Default: `os.availableParallelism()`. */
  workers: number;
  /** Default `auto`. */
  ep: ExecutionProviderChoice;
  /** Most rows in one `session.run`, also capped by each model's `maxBatchSize`. Default 64. */
  maxBatch: number;
  /**
   * Microseconds a partial batch may wait for more rows once the model is busy (Triton's
   * `max_queue_delay_microseconds`). A request reaching an idle model never waits. Default 0.
   */
  maxQueueDelayUs: number;
  /** Requests waiting per model version before new ones are refused. Default 256. */
  maxQueue: number;
  /** Status for a full queue: 429 (with Retry-After) or 503, as Triton answers. Default 429. */
  queueFullStatus: 429 | 503;
  /** Milliseconds every inference request waits before it is handled: simulated network distance. Default 0. */
  delayMs: number;
  /**
   * Tests only: extra milliseconds every run of one model version takes (live and shadow), to make a slower
   * candidate. Default: none.
   */
  versionDelayMs: VersionDelay[];
  /** Milliseconds between readiness turning false and the listener closing on SIGTERM. Default 0. */
  shutdownDelayMs: number;
  /** When set, inference requests must carry the edge's signature. Environment only. */
  sharedSecret?: string;
  /** When set, model control accepts `Authorization: Bearer <token>`; unset, it is refused. Environment only. */
  adminToken?: string;
  /**
   * Ed25519 public key (base64 of its 32 raw bytes) every model file must be signed with; a file unsigned or
   * signed otherwise is refused. Unset: unsigned models are served, and the pool says so loudly.
   */
  modelPublicKey?: string;
}

/** `--version-delay-ms digits@2=20`: every run of digits version 2 waits 20 ms first. */
export interface VersionDelay {
  model: string;
  version: string;
  ms: number;
}

const REPO_MODELS = fileURLToPath(new URL("../models/", import.meta.url));

interface OptionDoc {
  flag: string;
  env: string;
  value: string;
  help: string;
}

/** Flags and environment variables, in `--help` order. Secrets have no flag: flags show up in `ps`. */
const DOCS: readonly OptionDoc[] = [
  { flag: "port", env: "REGIONAL_PORT", value: "P", help: "TCP port; 0 picks a free one (default 8000)" },
  {
    flag: "grpc-port",
    env: "REGIONAL_GRPC_PORT",
    value: "P|off",
    help: "gRPC port (Open Inference Protocol); 0 picks a free one, off serves no gRPC (default 8001)",
  },
  { flag: "host", env: "REGIONAL_HOST", value: "ADDR", help: "interface to listen on (default 0.0.0.0)" },
  {
    flag: "region",
    env: "REGIONAL_REGION",
    value: "NAME",
    help: 'region name, answered as "regional:NAME" (default local)',
  },
  {
    flag: "models",
    env: "REGIONAL_MODELS",
    value: "DIR",
    help: "model repository, Triton layout (default: the repo's models/)",
  },
  {
    flag: "workers",
    env: "REGIONAL_WORKERS",
    value: "N",
    help: "processes sharing the port (default: number of cores)",
  },
  {
    flag: "ep",
    env: "REGIONAL_EP",
    value: "auto|cuda|cpu",
    help: "execution provider; auto tries cuda, then cpu (default auto)",
  },
  {
    flag: "max-batch",
    env: "REGIONAL_MAX_BATCH",
    value: "ROWS",
    help: "most rows per session.run, capped by the model's maxBatchSize (default 64)",
  },
  {
    flag: "max-queue-delay-us",
    env: "REGIONAL_MAX_QUEUE_DELAY_US",
    value: "US",
    help: "how long a partial batch may wait for more rows while the model is busy (default 0)",
  },
  {
    flag: "max-queue",
    env: "REGIONAL_MAX_QUEUE",
    value: "N",
    help: "requests waiting per model version before refusing (default 256)",
  },
  {
    flag: "queue-full-status",
    env: "REGIONAL_QUEUE_FULL_STATUS",
    value: "429|503",
    help: "status for a full queue (default 429, with Retry-After)",
  },
  {
    flag: "delay-ms",
    env: "REGIONAL_DELAY_MS",
    value: "MS",
    help: "wait before handling inference requests: simulated network distance for local stacks and tests (default 0)",
  },
  {
    flag: "version-delay-ms",
    env: "REGIONAL_VERSION_DELAY_MS",
    value: "M@V=MS,...",
    help: "tests only: every run of model M version V waits MS first, live or shadow (default: none)",
  },
  {
    flag: "model-public-key",
    env: "MODEL_PUBLIC_KEY",
    value: "KEY",
    help: "serve only model files signed by this Ed25519 key (base64, from `npm run model -- keygen`; default: none, unsigned models are served)",
  },
  {
    flag: "shutdown-delay-ms",
    env: "REGIONAL_SHUTDOWN_DELAY_MS",
    value: "MS",
    help: "on SIGTERM, time between readiness turning false and closing the listener (default 0)",
  },
];

export const HELP = `Usage: npm run regional -- [options]

The regional inference pool: /v1/classify, Open Inference Protocol v2 (HTTP, and gRPC on --grpc-port), /metrics.

Options (each also settable by the environment variable shown; flags win):
${DOCS.map((d) => `  --${`${d.flag} ${d.value}`.padEnd(28)} ${d.env.padEnd(28)} ${d.help}`).join("\n")}
  --help${" ".repeat(54)}print this and exit

Environment only:
  REGIONAL_SHARED_SECRET       inference endpoints require the edge's HMAC signature (401 without); gRPC
                               inference requires "authorization: Bearer <token>" metadata, the token
                               being hex HMAC-SHA256("edgecascade-grpc-v1") with the secret (UNAUTHENTICATED without)
  ADMIN_TOKEN                  model control requires "Authorization: Bearer <token>" (refused when unset)

Signals: SIGHUP reloads every model from disk; SIGTERM/SIGINT drain and exit.
`;

export type ParsedCommandLine = { help: true } | { help: false; options: RegionalOptions };

/** Bad option: the message names the flag and the environment variable. */
export class OptionError extends Error {}

function fieldName(doc: OptionDoc): string {
  return `--${doc.flag} (${doc.env})`;
}

function integer(doc: OptionDoc, raw: string, min: number, max: number): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new OptionError(`${fieldName(doc)} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

function oneOf<const T extends string>(doc: OptionDoc, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new OptionError(`${fieldName(doc)} must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function matching(doc: OptionDoc, raw: string, pattern: RegExp, what: string): string {
  if (!pattern.test(raw)) throw new OptionError(`${fieldName(doc)} must be ${what}, got "${raw}"`);
  return raw;
}

/** Empty counts as unset, so `REGIONAL_SHARED_SECRET= npm run regional` runs without signatures. */
function secret(raw: string | undefined): string | undefined {
  return raw === undefined || raw === "" ? undefined : raw;
}

/**
 * Options from the command line and the environment, validated once; the error names the field.
 * `--help` anywhere returns `{help: true}`.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        help: { type: "boolean" },
        ...Object.fromEntries(DOCS.map((d) => [d.flag, { type: "string" as const }])),
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new OptionError((err as Error).message);
  }
  if (values.help) return { help: true };

  const docs = new Map(DOCS.map((d) => [d.flag, d]));
  /** The flag's value, else the environment's, else undefined; empty environment values count as unset. */
  const read = (flag: string): [OptionDoc, string | undefined] => {
    const doc = docs.get(flag)!;
    const fromFlag = values[flag];
    if (typeof fromFlag === "string") return [doc, fromFlag];
    const fromEnv = env[doc.env];
    return [doc, fromEnv === "" ? undefined : fromEnv];
  };
  const int = (flag: string, fallback: number, min: number, max: number): number => {
    const [doc, raw] = read(flag);
    return raw === undefined ? fallback : integer(doc, raw, min, max);
  };
  const text = (flag: string, fallback: string, pattern: RegExp, what: string): string => {
    const [doc, raw] = read(flag);
    return raw === undefined ? fallback : matching(doc, raw, pattern, what);
  };

  const [keyDoc, keyRaw] = read("model-public-key");
  if (keyRaw !== undefined && !isPublicKeyText(keyRaw)) {
    throw new OptionError(
      `${fieldName(keyDoc)} must be an Ed25519 public key: base64 of 32 bytes, as \`npm run model -- keygen\` prints it`,
    );
  }
  const [delayDoc, delayRaw] = read("version-delay-ms");
  const versionDelayMs = (delayRaw ?? "")
    .split(",")
    .filter((part) => part.trim() !== "")
    .map((part): VersionDelay => {
      const match = /^\s*([A-Za-z0-9_][\w.-]*)@(\d+)=(\d{1,6})\s*$/.exec(part);
      if (!match) {
        throw new OptionError(
          `${fieldName(delayDoc)} must be MODEL@VERSION=MS[,...] (e.g. digits@2=20), got "${part}"`,
        );
      }
      return { model: match[1]!, version: match[2]!, ms: Number(match[3]) };
    });
  const [epDoc, epRaw] = read("ep");
  const [statusDoc, statusRaw] = read("queue-full-status");
  const modelsDir = text("models", REPO_MODELS, /\S/, "a directory");
  const port = int("port", 8000, 0, 65535);
  const [grpcDoc, grpcRaw] = read("grpc-port");
  let grpcPort: number | undefined = 8001;
  if (grpcRaw !== undefined) {
    const n = /^\d{1,5}$/.test(grpcRaw.trim()) ? Number(grpcRaw) : Number.NaN;
    if (grpcRaw.trim() === "off") grpcPort = undefined;
    else if (n <= 65535) grpcPort = n;
    else throw new OptionError(`${fieldName(grpcDoc)} must be a port from 0 to 65535, or off, got "${grpcRaw}"`);
  }
  if (grpcPort !== undefined && grpcPort !== 0 && grpcPort === port) {
    throw new OptionError(`${fieldName(grpcDoc)} must differ from --port (REGIONAL_PORT): both are ${port}`);
  }
  const options: RegionalOptions = {
    port,
    grpcPort,
    host: text("host", "0.0.0.0", /^[\w.:-]+$/, "a host name or IP address"),
    region: text("region", "local", /^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and '-' (e.g. us-east)"),
    modelsDir,
    workers: int("workers", availableParallelism(), 1, 256),
    ep: epRaw === undefined ? "auto" : oneOf(epDoc, epRaw, EXECUTION_PROVIDERS),
    maxBatch: int("max-batch", 64, 1, 4096),
    maxQueueDelayUs: int("max-queue-delay-us", 0, 0, 10_000_000),
    maxQueue: int("max-queue", 256, 1, 1_000_000),
    queueFullStatus: statusRaw === undefined ? 429 : (Number(oneOf(statusDoc, statusRaw, ["429", "503"])) as 429 | 503),
    delayMs: int("delay-ms", 0, 0, 600_000),
    shutdownDelayMs: int("shutdown-delay-ms", 0, 0, 600_000),
    versionDelayMs,
    sharedSecret: secret(env.REGIONAL_SHARED_SECRET),
    adminToken: secret(env.ADMIN_TOKEN),
    modelPublicKey: keyRaw?.trim(),
  };
  return { help: false, options };
}
