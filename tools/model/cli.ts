/**
 * `npm run model -- <subcommand> ...`: each subcommand is one entry of the list handed to `runModelCli`
 * (tools/model/commands.ts), so a new one plugs in without touching the dispatch.
 */
export interface Subcommand {
  name: string;
  /** One line for the overview. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  /** Runs with the arguments after the subcommand's name; resolves to the exit code. */
  run(argv: string[], out: Output): Promise<number>;
}

/** Where a subcommand writes: results to `log`, progress and warnings to `note`. */
export interface Output {
  log(line: string): void;
  note(line: string): void;
}

/** A mistake in the command line: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {}

/**
 * A refusal with a message saying what to fix (a file that does not load, shapes that do not match, bad
 * data): printed as it is, exit code 1.
 */
export class RefusedError extends Error {}

export function overview(commands: readonly Subcommand[], tool = "model"): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `Usage: npm run ${tool} -- <subcommand> [options]`,
    "",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `npm run ${tool} -- <subcommand> --help  describes one.`,
  ].join("\n");
}

/**
 * Dispatch `argv` (`[subcommand, ...options]`) to its subcommand; every failure becomes a message and an exit
 * code. `tool` names the npm script in messages (`npm run rollout` uses this dispatch too).
 */
export async function runModelCli(
  argv: readonly string[],
  commands: readonly Subcommand[],
  out: Output,
  tool = "model",
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    out.log(overview(commands, tool));
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    out.note(`${tool}: unknown subcommand "${name}"; one of ${commands.map((c) => c.name).join(", ")}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    out.log(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, out);
  } catch (err) {
    if (err instanceof UsageError) {
      out.note(`${tool} ${name}: ${err.message}\n(npm run ${tool} -- ${name} --help)`);
      return 2;
    }
    if (err instanceof RefusedError) {
      out.note(`${tool} ${name}: refused: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
