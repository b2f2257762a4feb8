import { wantsHelp } from "../tools/cli/command.ts";
import { UsageError } from "../tools/cli/errors.ts";
import { defineTable, type FlagValues, flagHelp, parseFlags, type SimulationKeys } from "../tools/cli/flags.ts";
import { ADMISSION_OPTIONS } from "./options/admission.ts";
import { MODEL_OPTIONS } from "./options/models.ts";
import { REGISTRY_OPTIONS } from "./options/registry.ts";
import { SERVER_OPTIONS } from "./options/server.ts";
import { SIMULATION_OPTIONS } from "./options/simulation.ts";
import { TRACING_OPTIONS } from "./options/tracing.ts";
import { TRUST_OPTIONS } from "./options/trust.ts";

/**
 * Every option of the pool, one row each (tools/cli/table.ts), grouped by concern in regional/options/ (in
 * docs/regional.md's order): its flag, its environment variable (a flag wins;
 * secrets have no flag, since flags show up in `ps`), default, unit and help. The parser, `--help`, the options'
 * types and docs/regional.md's tables (regional/options.test.ts) all come from it. The rows marked `simulation`
 * make the pool worse on purpose, for tests and local stacks, and are grouped apart (`options.simulation`).
 */
export const REGIONAL_OPTIONS = defineTable({
  ...SERVER_OPTIONS,
  ...MODEL_OPTIONS,
  ...ADMISSION_OPTIONS,
  ...TRUST_OPTIONS,
  ...REGISTRY_OPTIONS,
  ...TRACING_OPTIONS,
  ...SIMULATION_OPTIONS,
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
