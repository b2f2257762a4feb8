/**
 * A command line read against a settings table (table.ts): node:util's parseArgs splits it; this file adds
 * what it lacks (flags spelled apart from the table's keys, old spellings kept as aliases, values given by
 * environment variables, pass-through for another program) and hands the raw values to the table's reading,
 * which converts and checks them with errors that name the flag.
 */
import { parseArgs } from "node:util";
import { suggestedField } from "../../protocol/field-suggestion.ts";
import { UsageError } from "./errors.ts";
import { type FlagTable, type FlagValues, flagName, readTable } from "./table.ts";

export {
  defineTable,
  type FlagSpec,
  type FlagTable,
  type FlagValues,
  flagHelp,
  type SimulationKeys,
  simulationWarning,
} from "./table.ts";

export interface ParsedFlags<T extends FlagTable> {
  values: FlagValues<T>;
  /** Arguments that are not flags, in order. */
  positionals: string[];
  /** With `passThrough`: unknown flags and every positional, exactly as given, for another program. */
  rest: string[];
  /** The simulation settings that are on, as given (table.ts `simulationWarning` words the line). */
  simulating: string[];
}

export interface ParseOptions {
  /** How many positionals the command takes (default none). */
  positionals?: { min: number; max: number };
  /** Unknown flags are not errors but handed back in `rest` (e.g. for wrangler). */
  passThrough?: boolean;
  /** The environment that rows with `env` read when their flag is not given. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * "; did you mean --edge-port?" for an unknown flag: the flags it is the last word of (`--port` for `--edge-port`,
 * `--us-port`, ...), else the one flag within two typed characters of it; "" when none.
 */
function meantFlags(unknown: string, known: ReadonlyMap<string, string>): string {
  const names = [...known.keys()].filter((n) => n.length > 1);
  let meant = names.filter((n) => n.endsWith(`-${unknown}`));
  if (meant.length === 0) {
    const near = suggestedField(unknown, names);
    meant = near ? [near] : [];
  }
  if (meant.length === 0) return "";
  const listed = meant.map((n) => `--${n}`);
  return `; did you mean ${listed.length === 1 ? listed[0] : `${listed.slice(0, -1).join(", ")} or ${listed.at(-1)}`}?`;
}

/** `argv` read against `table`: every value converted and checked; a mistake throws `UsageError` naming the flag. */
export function parseFlags<T extends FlagTable>(
  table: T,
  argv: readonly string[],
  options: ParseOptions = {},
): ParsedFlags<T> {
  // Aliases are separate parseArgs options that write to their row.
  const keyOf = new Map<string, string>();
  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [key, spec] of Object.entries(table)) {
    const flag = flagName(key, spec);
    if (flag === undefined) continue;
    const type = spec.type === "boolean" ? "boolean" : "string";
    for (const spelling of [flag, ...(spec.aliases ?? [])]) {
      keyOf.set(spelling, key);
      config[spelling] = { type };
    }
    if (spec.short) config[flag] = { type, short: spec.short };
  }
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const given = new Map<string, string | boolean>();
  const positionals: string[] = [];
  const rest: string[] = [];
  const passed = new Set<number>();
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      positionals.push(token.value);
      if (options.passThrough) rest.push(token.value);
      continue;
    }
    const key = keyOf.get(token.name);
    if (key === undefined) {
      if (!options.passThrough) throw new UsageError(`unknown flag ${token.rawName}${meantFlags(token.name, keyOf)}`);
      if (!passed.has(token.index)) rest.push(argv[token.index]!);
      passed.add(token.index);
      continue;
    }
    const spec = table[key]!;
    const flag = flagName(key, spec)!;
    if (spec.type === "boolean") {
      if (token.inlineValue) throw new UsageError(`--${flag} takes no value, got ${JSON.stringify(token.value)}`);
      given.set(key, true);
    } else {
      const value = token.value;
      // parseArgs takes the next argument whatever it is; a flag there means the value was forgotten.
      if (value === undefined || (!token.inlineValue && value.startsWith("--"))) {
        throw new UsageError(`--${flag} needs a value`);
      }
      given.set(key, value);
    }
  }
  const { min = 0, max = 0 } = options.positionals ?? {};
  if (positionals.length < min || (!options.passThrough && positionals.length > max)) {
    const extra = positionals.length > max ? `: ${positionals.slice(max).join(" ")}` : "";
    throw new UsageError(
      max === 0
        ? `takes no arguments besides flags${extra}`
        : `takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? "" : "s"}, got ${positionals.length}${extra}`,
    );
  }
  const { values, simulating } = readTable(table, { given, ...(options.env ? { env: options.env } : {}) });
  return { values, positionals: options.passThrough ? [] : positionals, rest, simulating };
}
