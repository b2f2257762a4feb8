/**
 * A command: its flags as a table (flags.ts), how it is called, and what it runs. One `--help`, one way to
 * fail: a mistake in the command line exits 2 with a message naming the flag, a refusal 1. A tool with
 * subcommands (`npm run model`, `npm run rollout`) is a list of commands handed to `runSubcommands`, so a new
 * one plugs in without touching the dispatch.
 */
import { RefusedError, UsageError } from "./errors.ts";
import { type FlagTable, type FlagValues, flagHelp, type ParsedFlags, type ParseOptions, parseFlags } from "./flags.ts";

/** Where a command writes: results to `log`, progress and warnings to `note`. */
export interface Output {
  log(line: string): void;
  note(line: string): void;
}

/** What a command gets besides its flags. */
export interface CommandArgs {
  /** Arguments that are not flags (as many as `parse.positionals` allows). */
  positionals: string[];
  /** With `parse.passThrough`: what the command does not know, as given. */
  rest: string[];
}

/** How a command is called and described, and its flags. */
export interface CommandSpec<T extends FlagTable = FlagTable> {
  /** A subcommand's name, or a program's (what its messages start with). */
  name: string;
  /** One line for the list of subcommands. */
  summary?: string;
  /** How it is called, after "Usage: " (`npm run probe -- --url URL [options]`). */
  usage: string;
  /** What it does: between the usage line and the flags. */
  description?: string;
  /** After the flags. */
  epilog?: string;
  flags: T;
  parse?: ParseOptions;
}

export interface Command<T extends FlagTable = FlagTable> extends CommandSpec<T> {
  /** Resolves to the exit code. */
  run(values: FlagValues<T>, args: CommandArgs, out: Output): Promise<number>;
}

/** A command with its flags' types inferred from the table. */
export function defineCommand<const T extends FlagTable>(command: Command<T>): Command<T> {
  return command;
}

/** The `--help` text, generated from the table. */
export function commandHelp(command: CommandSpec): string {
  const parts = [`Usage: ${command.usage}`];
  if (command.description) parts.push(command.description);
  parts.push(flagHelp(command.flags));
  if (command.epilog) parts.push(command.epilog);
  return parts.join("\n\n");
}

/** Whether `--help` or `-h` is among a command's own arguments (before any `--`). */
export const wantsHelp = (argv: readonly string[]) => {
  const end = argv.indexOf("--");
  const own = end < 0 ? argv : argv.slice(0, end);
  return own.includes("--help") || own.includes("-h");
};

/**
 * Parse `argv` against the command's table and run it; every failure of the command line becomes a message and
 * an exit code. `label` starts the messages (`model import`), `invocation` is how to ask for help
 * (`npm run model -- import`).
 */
export async function runCommand(
  command: Command,
  argv: readonly string[],
  out: Output,
  label = command.name,
  invocation = `npm run ${command.name} --`,
): Promise<number> {
  if (wantsHelp(argv)) {
    out.log(commandHelp(command));
    return 0;
  }
  try {
    const { values, positionals, rest } = parseFlags(command.flags, argv, command.parse);
    return await command.run(values, { positionals, rest }, out);
  } catch (err) {
    if (err instanceof UsageError) {
      out.note(`${label}: ${err.message}\n(${invocation} --help)`);
      return 2;
    }
    if (err instanceof RefusedError) {
      out.note(`${label}: refused: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

export function overview(commands: readonly Command[], tool: string): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `Usage: npm run ${tool} -- <subcommand> [options]`,
    "",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary ?? ""}`),
    "",
    `npm run ${tool} -- <subcommand> --help  describes one.`,
  ].join("\n");
}

/** Dispatch `argv` (`[subcommand, ...options]`) to its command; `tool` names the npm script in messages. */
export async function runSubcommands(
  argv: readonly string[],
  commands: readonly Command[],
  out: Output,
  tool: string,
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
  return runCommand(command, rest, out, `${tool} ${name}`, `npm run ${tool} -- ${name}`);
}

const console_: Output = { log: (line) => console.log(line), note: (line) => console.error(line) };

/**
 * Run a program's command with the process's arguments and exit with its code. An error the command did not
 * expect is printed with `label` and exits `errorExit` (default 1). With `serves`, a command that resolves 0
 * has started servers: the process stays theirs (their signal handlers end it).
 */
export function runMain(
  command: Command,
  options: { invocation?: string; label?: string; errorExit?: number; serves?: boolean } = {},
): void {
  const label = options.label ?? command.name;
  runCommand(command, process.argv.slice(2), console_, label, options.invocation).then(
    (code) => {
      if (code !== 0 || !options.serves) process.exit(code);
    },
    (err: Error) => {
      console.error(`${label}: ${err.message}`);
      process.exit(options.errorExit ?? 1);
    },
  );
}

/** `runSubcommands` for a program: the process's arguments, its exit code; an unexpected error's stack, exit 1. */
export function runSubcommandsMain(commands: readonly Command[], tool: string): void {
  runSubcommands(process.argv.slice(2), commands, console_, tool).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`${tool}: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}

/**
 * For a script whose work runs at module level (the benchmarks): the process's flags against the table;
 * `--help` prints the help and exits 0, a mistake prints it and exits 2.
 */
export function processFlags<const T extends FlagTable>(
  spec: CommandSpec<T>,
  invocation = `npm run ${spec.name} --`,
): ParsedFlags<T> {
  const argv = process.argv.slice(2);
  if (wantsHelp(argv)) {
    console.log(commandHelp(spec));
    process.exit(0);
  }
  try {
    return parseFlags(spec.flags, argv, spec.parse);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${spec.name}: ${err.message}\n(${invocation} --help)`);
    process.exit(2);
  }
}
