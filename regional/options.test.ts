import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { UsageError } from "../tools/cli/errors.ts";
import { flagName, markdownDefault, placeholder, simulationWarning } from "../tools/cli/table.ts";
import { HELP, parseCommandLine, REGIONAL_OPTIONS, type RegionalOptions } from "./options.ts";

const ROWS = Object.entries(REGIONAL_OPTIONS);

/** An Ed25519 public key's shape: base64 of 32 bytes. */
const PUBLIC_KEY = `${"A".repeat(43)}=`;

const options = (argv: string[], env: Record<string, string> = {}): RegionalOptions => {
  const parsed = parseCommandLine(argv, env);
  if (parsed.help) throw new Error("help");
  return parsed.options;
};

describe("parseCommandLine", () => {
  it("has documented defaults", () => {
    const o = options([]);
    expect(o).toMatchObject({
      port: 8000,
      grpcPort: 8001,
      host: "0.0.0.0",
      region: "local",
      workers: availableParallelism(),
      ep: "auto",
      maxBatch: 64,
      maxQueueDelayUs: 0,
      maxQueue: 256,
      queueFullStatus: 429,
      tenants: [],
      bestEffortWaitPercent: 50,
      loadPolicy: "auto",
      pinnedModels: [],
      modelMemoryMb: 256,
      modelPlacement: "hashed",
      shutdownDelayMs: 0,
      simulation: { delayMs: 0, simulatedRunMs: 0, versionDelayMs: [] },
      sharedSecret: undefined,
      adminToken: undefined,
      modelPublicKey: undefined,
      otlpEndpoint: undefined,
      otlpTracesEndpoint: undefined,
      tracesExporter: "otlp",
      tracesSampler: "parentbased_always_on",
      tracesSamplerArg: 1,
      serviceName: "edgecascade-regional",
      sdkDisabled: false,
      spanExportDelayMs: 5000,
      spanQueueSize: 2048,
    });
    expect(o.modelsDir).toMatch(/\/models\/$/);
  });

  it("reads every option from the environment, and flags win over it", () => {
    const env = {
      REGIONAL_PORT: "9001",
      REGIONAL_GRPC_PORT: "9101",
      REGIONAL_HOST: "127.0.0.1",
      REGIONAL_REGION: "eu",
      REGIONAL_MODELS: "/srv/models",
      REGIONAL_WORKERS: "3",
      REGIONAL_EP: "cpu",
      REGIONAL_MAX_BATCH: "32",
      REGIONAL_MAX_QUEUE_DELAY_US: "500",
      REGIONAL_MAX_QUEUE: "10",
      REGIONAL_QUEUE_FULL_STATUS: "503",
      REGIONAL_LOAD_POLICY: "on-demand",
      REGIONAL_PINNED_MODELS: "digits,breast-cancer",
      REGIONAL_MODEL_MEMORY_MB: "64",
      REGIONAL_MODEL_PLACEMENT: "every-worker",
      REGIONAL_DELAY_MS: "20",
      REGIONAL_SHUTDOWN_DELAY_MS: "5000",
      REGIONAL_SHARED_SECRET: "s3cret",
      ADMIN_TOKEN: "t0ken",
      REGIONAL_VERSION_DELAY_MS: "digits@2=20,breast-cancer@3=5",
      MODEL_PUBLIC_KEY: PUBLIC_KEY,
      REGIONAL_TENANTS: "acme=guaranteed:500",
      REGIONAL_SIMULATED_RUN_MS: "4",
      REGIONAL_BEST_EFFORT_WAIT_PERCENT: "40",
      REGIONAL_REGISTRY: "s3://edgecascade/models",
      AWS_ENDPOINT_URL_S3: "https://account.r2.cloudflarestorage.com",
      REGIONAL_REGISTRY_POLL_MS: "2000",
      REGIONAL_REGISTRY_CACHE: "/tmp/registry",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector:4318/v1/traces",
      OTEL_TRACES_EXPORTER: "none",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.01",
      OTEL_SERVICE_NAME: "pool-eu",
      OTEL_SDK_DISABLED: "true",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BSP_MAX_QUEUE_SIZE: "64",
    };
    expect(options([], env)).toEqual({
      registry: "s3://edgecascade/models",
      registryEndpoint: "https://account.r2.cloudflarestorage.com",
      registryPollMs: 2000,
      registryCache: "/tmp/registry",
      port: 9001,
      grpcPort: 9101,
      host: "127.0.0.1",
      region: "eu",
      modelsDir: "/srv/models",
      workers: 3,
      ep: "cpu",
      maxBatch: 32,
      maxQueueDelayUs: 500,
      maxQueue: 10,
      queueFullStatus: 503,
      tenants: [{ name: "acme", class: "guaranteed", reservedRowsPerS: 500, weight: 1 }],
      bestEffortWaitPercent: 40,
      loadPolicy: "on-demand",
      pinnedModels: ["digits", "breast-cancer"],
      modelMemoryMb: 64,
      modelPlacement: "every-worker",
      shutdownDelayMs: 5000,
      simulation: {
        delayMs: 20,
        simulatedRunMs: 4,
        versionDelayMs: [
          { model: "digits", version: "2", ms: 20 },
          { model: "breast-cancer", version: "3", ms: 5 },
        ],
      },
      sharedSecret: "s3cret",
      adminToken: "t0ken",
      modelPublicKey: PUBLIC_KEY,
      otlpEndpoint: "http://collector:4318",
      otlpTracesEndpoint: "https://collector:4318/v1/traces",
      tracesExporter: "none",
      tracesSampler: "parentbased_traceidratio",
      tracesSamplerArg: 0.01,
      serviceName: "pool-eu",
      sdkDisabled: true,
      spanExportDelayMs: 100,
      spanQueueSize: 64,
    });
    expect(options(["--port", "9002", "--region", "ap", "--models", "/m"], env)).toMatchObject({
      port: 9002,
      region: "ap",
      modelsDir: "/m",
    });
  });

  it("empty environment values count as unset", () => {
    expect(options([], { REGIONAL_PORT: "", REGIONAL_SHARED_SECRET: "" })).toMatchObject({
      port: 8000,
      sharedSecret: undefined,
    });
  });

  it("--grpc-port: 0 picks a free port, off serves no gRPC", () => {
    expect(options(["--grpc-port", "0"]).grpcPort).toBe(0);
    expect(options(["--grpc-port", "off"]).grpcPort).toBeUndefined();
    expect(options([], { REGIONAL_GRPC_PORT: "off" }).grpcPort).toBeUndefined();
    expect(options(["--port", "0", "--grpc-port", "0"])).toMatchObject({ port: 0, grpcPort: 0 });
  });

  it.each([
    [["--grpc-port", "none"], '--grpc-port (REGIONAL_GRPC_PORT) must be a port from 0 to 65535, or off, got "none"'],
    [["--grpc-port", "70000"], '--grpc-port (REGIONAL_GRPC_PORT) must be a port from 0 to 65535, or off, got "70000"'],
    [
      ["--grpc-port", "9000", "--port", "9000"],
      "--grpc-port (REGIONAL_GRPC_PORT) must differ from --port (REGIONAL_PORT): both are 9000",
    ],
    [["--port", "65536"], '--port (REGIONAL_PORT) must be an integer from 0 to 65535, got "65536"'],
    [["--port", "80.5"], '--port (REGIONAL_PORT) must be an integer from 0 to 65535, got "80.5"'],
    [["--max-batch", "0"], '--max-batch (REGIONAL_MAX_BATCH) must be an integer from 1 to 4096, got "0"'],
    [["--ep", "tpu"], '--ep (REGIONAL_EP) must be one of auto, cuda, cpu, got "tpu"'],
    [["--max-batch", "0x10"], '--max-batch (REGIONAL_MAX_BATCH) must be an integer from 1 to 4096, got "0x10"'],
    [["--queue-full-status", "500"], '--queue-full-status (REGIONAL_QUEUE_FULL_STATUS) must be 429 or 503, got "500"'],
    [["--delay-ms=-1"], '--delay-ms (REGIONAL_DELAY_MS) must be an integer from 0 to 600000, got "-1"'],
    [["--region", "Europe"], "--region (REGIONAL_REGION) must be lowercase letters, digits and '-'"],
    [
      ["--version-delay-ms", "digits=20"],
      '--version-delay-ms (REGIONAL_VERSION_DELAY_MS) must be MODEL@VERSION=MS[,...] (e.g. digits@2=20), got "digits=20"',
    ],
    [["--model-public-key", "abc"], "--model-public-key (MODEL_PUBLIC_KEY) must be an Ed25519 public key"],
    [["--nope"], "unknown flag --nope"],
    [["extra"], "takes no arguments besides flags: extra"],
  ])("%j: an error naming the field", (argv, message) => {
    expect(() => parseCommandLine(argv, {})).toThrow(UsageError);
    expect(() => parseCommandLine(argv, {})).toThrow(message);
  });

  it.each([
    [{ OTEL_TRACES_SAMPLER: "jaeger_remote" }, "OTEL_TRACES_SAMPLER: must be one of parentbased_always_on"],
    [{ OTEL_TRACES_SAMPLER_ARG: "1.5" }, 'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, got "1.5"'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http(s) URL, got "collector:4318"',
    ],
    [{ OTEL_SDK_DISABLED: "yes" }, 'OTEL_SDK_DISABLED: must be true or false, got "yes"'],
  ])("%j: tracing variables are checked too", (env, message) => {
    expect(() => parseCommandLine([], env)).toThrow(message);
  });

  it("--help wins over everything else", () => {
    expect(parseCommandLine(["--port", "1", "--help"], {})).toEqual({ help: true });
    expect(HELP).toContain("--max-queue-delay-us US");
  });
});

describe("the option table", () => {
  it("--help shows every row once, with its default and unit, simulation settings apart", () => {
    for (const [, spec] of ROWS) expect(HELP.split(` ${spec.env} `).length - 1, spec.env).toBe(1);
    expect(HELP).toMatch(/--max-queue-delay-us US +REGIONAL_MAX_QUEUE_DELAY_US +.*\(default 0 µs\)/);
    expect(HELP).toMatch(/--models DIR +REGIONAL_MODELS +.*\(default the repo's models\/\)/);
    const [serving, simulation] = HELP.split("Simulation, for tests and local stacks only");
    expect(serving).toContain("--shutdown-delay-ms MS");
    expect(serving).not.toContain("--delay-ms MS");
    expect(simulation).toContain("--delay-ms MS");
    expect(simulation).toContain("--version-delay-ms M@V=MS,...");
  });

  it("docs/regional.md's option tables are its rows, in its order", () => {
    const docs = readFileSync(new URL("../docs/regional.md", import.meta.url), "utf8");
    const section = docs.slice(
      docs.indexOf("\n## Options\n"),
      docs.indexOf("\n## ", docs.indexOf("\n## Options\n") + 1),
    );
    const rows = section
      .split("\n")
      .filter((line) => line.startsWith("| `--") || line.startsWith("| — |"))
      .map((line) =>
        line
          .split(/(?<!\\)\|/)
          .slice(1, 4)
          .map((cell) => cell.trim()),
      );
    expect(rows).toEqual(
      ROWS.map(([key, spec]) => [
        flagName(key, spec) ? `\`--${flagName(key, spec)} ${placeholder(spec).replaceAll("|", "\\|")}\`` : "—",
        `\`${spec.env}\``,
        markdownDefault(spec),
      ]),
    );
  });

  it("README's regional command line writes each flag as the table does", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const line = readme.split("\n").find((l) => l.includes("`npm run regional -- "))!;
    const flags = [...line.matchAll(/--([a-z-]+) ([^\s\]`]+)/g)].map((m) => [m[1], m[2]!.replaceAll("\\|", "|")]);
    expect(flags.length).toBeGreaterThan(3);
    for (const [flag, value] of flags) {
      const row = ROWS.find(([key, spec]) => flagName(key, spec) === flag);
      expect(row && placeholder(row[1]), `--${flag}`).toBe(value);
    }
  });
});

describe("the simulation warning", () => {
  const simulating = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseCommandLine(argv, env);
    if (parsed.help) throw new Error("help");
    return simulationWarning(parsed.simulating);
  };

  it("is silent without simulation settings, or with them at their defaults, and names each one that is set", () => {
    expect(simulating([])).toBeUndefined();
    expect(simulating(["--delay-ms", "0"], { REGIONAL_VERSION_DELAY_MS: "," })).toBeUndefined();
    expect(simulating(["--delay-ms", "20"])).toBe(
      "SIMULATION SETTINGS ON (--delay-ms 20): for tests and local stacks only, never in production",
    );
    expect(simulating([], { REGIONAL_DELAY_MS: "5", REGIONAL_VERSION_DELAY_MS: "digits@2=20" })).toMatch(
      /^SIMULATION SETTINGS ON \(--delay-ms 5, --version-delay-ms digits@2=20\)/,
    );
    expect(simulating(["--simulated-run-ms", "4"])).toMatch(/^SIMULATION SETTINGS ON \(--simulated-run-ms 4\)/);
  });
});
