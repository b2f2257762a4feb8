/**
 * Every CLI's flags as one table (name → type, default, help): the parser, the values' types and the `--help`
 * lines all come from it. node:util's parseArgs splits the command line; this file adds what it lacks: typed
 * numbers and lists, choices, required flags, old spellings kept as aliases, and errors that name the flag.
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

interface FlagCommon {
  /** The `--help` line; `\n` continues it under the same column. */
  help: string;
  /** The value's name in `--help` (`--url URL`); default: the type's (`N`, `S`, `LIST`, `a|b`). */
  placeholder?: string;
  /** What `--help` says the default is when the table's default is not the whole story ("this repository's models/"). */
  defaultText?: string;
  /** One-letter spelling (`-e`). */
  short?: string;
  /** Other spellings accepted for the same flag (kept when tools spelled one thing differently). */
  aliases?: readonly string[];
}

export type FlagSpec =
  | (FlagCommon & { type: "boolean" })
  | (FlagCommon & { type: "string"; default?: string; required?: boolean; choices?: readonly string[] })
  | (FlagCommon & {
      type: "number";
      default?: number;
      required?: boolean;
      /** Inclusive bounds (default: min 0, no max). */
      min?: number;
      max?: number;
      integer?: boolean;
    })
  /** Comma-separated values, each one of `choices` when given. */
  | (FlagCommon & { type: "list"; default?: readonly string[]; choices?: readonly string[] });

export type FlagTable = { readonly [name: string]: FlagSpec };

type ValueOf<F> = F extends { type: "boolean" }
  ? boolean
  : F extends { type: "number" }
    ? number
    : F extends { type: "list"; choices: readonly (infer C)[] }
      ? C[]
      : F extends { type: "list" }
        ? string[]
        : F extends { choices: readonly (infer C)[] }
          ? C
          : string;

/** Whether a flag always has a value: booleans and lists, and flags with a default or required. */
type Always<F> = F extends { type: "boolean" | "list" }
  ? true
  : F extends { default: unknown } | { required: true }
    ? true
    : false;

/** The parsed values of a table: `undefined` only for an optional flag without a default. */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T]: Always<T[K]> extends true ? ValueOf<T[K]> : ValueOf<T[K]> | undefined;
};

export interface ParsedFlags<T extends FlagTable> {
  values: FlagValues<T>;
  /** Arguments that are not flags, in order. */
  positionals: string[];
  /** With `passThrough`: unknown flags and every positional, exactly as given, for another program. */
  rest: string[];
}

export interface ParseOptions {
  /** How many positionals the command takes (default none). */
  positionals?: { min: number; max: number };
  /** Unknown flags are not errors but handed back in `rest` (e.g. for wrangler). */
  passThrough?: boolean;
}

/** `argv` read against `table`: every value converted and checked; a mistake throws `UsageError` naming the flag. */
export function parseFlags<T extends FlagTable>(
  table: T,
  argv: readonly string[],
  options: ParseOptions = {},
): ParsedFlags<T> {
  // Aliases are separate parseArgs options that write to their flag.
  const canonical = new Map<string, string>();
  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, spec] of Object.entries(table)) {
    const type = spec.type === "boolean" ? "boolean" : "string";
    for (const spelling of [name, ...(spec.aliases ?? [])]) {
      canonical.set(spelling, name);
      config[spelling] = { type };
    }
    if (spec.short) config[name] = { type, short: spec.short };
  }
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const raw = new Map<string, string | boolean>();
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
    const name = canonical.get(token.name);
    if (name === undefined) {
      if (!options.passThrough) throw new UsageError(`unknown flag ${token.rawName}`);
      if (!passed.has(token.index)) rest.push(argv[token.index]!);
      passed.add(token.index);
      continue;
    }
    const spec = table[name]!;
    if (spec.type === "boolean") {
      if (token.inlineValue) throw new UsageError(`--${name} takes no value, got ${JSON.stringify(token.value)}`);
      raw.set(name, true);
    } else {
      const value = token.value;
      // parseArgs takes the next argument whatever it is; a flag there means the value was forgotten.
      if (value === undefined || (!token.inlineValue && value.startsWith("--"))) {
        throw new UsageError(`--${name} needs a value`);
      }
      raw.set(name, value);
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
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) values[name] = flagValue(name, spec, raw.get(name));
  return { values: values as FlagValues<T>, positionals: options.passThrough ? [] : positionals, rest };
}

function flagValue(name: string, spec: FlagSpec, raw: string | boolean | undefined): unknown {
  if (spec.type === "boolean") return raw === true;
  if (raw === undefined) {
    if ("required" in spec && spec.required) throw new UsageError(`--${name} is required`);
    return spec.type === "list" ? [...(spec.default ?? [])] : spec.default;
  }
  const text = String(raw);
  switch (spec.type) {
    case "string":
      if (spec.choices && !spec.choices.includes(text)) {
        throw new UsageError(`--${name} must be ${oneOf(spec.choices)}, got ${JSON.stringify(text)}`);
      }
      return text;
    case "number": {
      const n = text.trim() === "" ? Number.NaN : Number(text);
      const { min = 0, max = Number.POSITIVE_INFINITY, integer = false } = spec;
      if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
        const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`;
        throw new UsageError(
          `--${name} must be ${integer ? "an integer" : "a number"} ${range}, got ${JSON.stringify(text)}`,
        );
      }
      return n;
    }
    case "list": {
      const items = text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = spec.choices ? items.filter((i) => !spec.choices!.includes(i)) : [];
      if (items.length === 0 || unknown.length > 0) {
        throw new UsageError(
          `--${name}: ${unknown.length ? `unknown ${unknown.join(", ")}; ` : ""}one or more of ${spec.choices?.join(", ") ?? "values"}, comma-separated`,
        );
      }
      return items;
    }
  }
}

const oneOf = (choices: readonly string[]) =>
  choices.length <= 2 ? choices.join(" or ") : `one of ${choices.join(", ")}`;

function placeholder(spec: FlagSpec): string {
  if (spec.type === "boolean") return "";
  if (spec.placeholder) return spec.placeholder;
  if ("choices" in spec && spec.choices)
    return spec.type === "list" ? `${spec.choices.join(",")}` : spec.choices.join("|");
  return { string: "S", number: "N", list: "LIST" }[spec.type];
}

function defaultOf(spec: FlagSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (spec.type === "boolean" || spec.default === undefined) return undefined;
  return Array.isArray(spec.default) ? spec.default.join(",") : String(spec.default);
}

/** The `--help` lines of a table, one flag each (continuations aligned), then `--help` itself. */
export function flagHelp(table: FlagTable): string {
  const rows = Object.entries(table).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : "";
    const left = `${short}--${name}${placeholder(spec) ? ` ${placeholder(spec)}` : ""}`;
    const notes = [
      "required" in spec && spec.required ? "required" : undefined,
      defaultOf(spec) !== undefined ? `default ${defaultOf(spec)}` : undefined,
      spec.aliases?.length ? `also ${spec.aliases.map((a) => `--${a}`).join(", ")}` : undefined,
    ].filter(Boolean);
    // After a help of several lines the notes get a line of their own, so they do not read as its last words.
    const gap = spec.help.includes("\n") ? "\n" : " ";
    return { left, text: notes.length ? `${spec.help}${gap}(${notes.join("; ")})` : spec.help };
  });
  rows.push({ left: "--help", text: "this text" });
  const width = Math.max(...rows.map((r) => r.left.length)) + 2;
  return rows
    .map(({ left, text }) => `  ${left.padEnd(width)}${text.split("\n").join(`\n  ${" ".repeat(width)}`)}`)
    .join("\n");
}
