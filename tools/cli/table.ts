/**
 * Settings as one table (name → type, default, help, and where a value may come from: a flag, an environment
 * variable): the values' types, their checks and the `--help` lines all come from it. Every CLI's flags
 * (flags.ts reads the command line against it), the regional pool's options (regional/options.ts: flags and
 * variables) and the Worker's variables (edge/env.ts) are such tables. Web-standard only: the Worker imports it.
 */
import { UsageError } from "./errors.ts";

interface SettingCommon {
  /** The `--help` line; `\n` continues it under the same column. */
  help: string;
  /** The value's name in `--help` (`--url URL`); default: the type's (`N`, `S`, `LIST`, `a|b`). */
  placeholder?: string;
  /**
   * The default as `--help` and the docs' tables write it when the table's default is not the whole story
   * ("the repo's `models/`", "unset"); Markdown: `--help` drops the backticks.
   */
  defaultText?: string;
  /** One-letter spelling (`-e`). */
  short?: string;
  /** Other spellings accepted for the same flag (kept when tools spelled one thing differently). */
  aliases?: readonly string[];
  /**
   * The flag's name when the table's key names the value instead (`maxBatch` from `--max-batch`); `false`: no
   * flag, the variable only (a secret: a process's flags are visible to anyone who can list processes).
   * Default: the key.
   */
  flag?: string | false;
  /** The environment variable that sets it when no flag does; an empty value counts as unset. */
  env?: string;
  /** The unit of a number, after its default in `--help` (`ms`, `µs`, `rows`). */
  unit?: string;
  /** A setting that makes things worse on purpose, for tests and local stacks: `simulating` names it when on. */
  simulation?: true;
}

export type FlagSpec =
  /** A flag without a value; from a variable, `true` or `false`. */
  | (SettingCommon & { type: "boolean" })
  | (SettingCommon & { type: "string"; default?: string; required?: boolean; choices?: readonly string[] })
  | (SettingCommon & {
      type: "number";
      default?: number;
      required?: boolean;
      /** Inclusive bounds (default: min 0, no max). */
      min?: number;
      max?: number;
      integer?: boolean;
    })
  /** Comma-separated values, each one of `choices` when given. */
  | (SettingCommon & { type: "list"; default?: readonly string[]; choices?: readonly string[] })
  /**
   * A value of its own kind: `parse` takes the raw text (never empty) and returns the value, or throws a
   * `UsageError` whose message reads after the setting's name ("must be a port from 0 to 65535, or off").
   */
  | (SettingCommon & { type: "parsed"; parse(raw: string): unknown; default?: unknown; required?: boolean });

export type FlagTable = { readonly [name: string]: FlagSpec };

type ValueOf<F> = F extends { type: "boolean" }
  ? boolean
  : F extends { type: "number" }
    ? number
    : F extends { type: "parsed"; parse(raw: string): infer V }
      ? V
      : F extends { type: "list"; choices: readonly (infer C)[] }
        ? C[]
        : F extends { type: "list" }
          ? string[]
          : F extends { choices: readonly (infer C)[] }
            ? C
            : string;

/** Whether a setting always has a value: booleans and lists, and settings with a default or required. */
type Always<F> = F extends { type: "boolean" | "list" }
  ? true
  : F extends { default: unknown } | { required: true }
    ? true
    : false;

/** The values of a table: `undefined` only for an optional setting without a default. */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T]: Always<T[K]> extends true ? ValueOf<T[K]> : ValueOf<T[K]> | undefined;
};

/** The keys of a table's simulation settings. */
export type SimulationKeys<T extends FlagTable> = {
  [K in keyof T]: T[K] extends { simulation: true } ? K : never;
}[keyof T];

/** The variables a table reads, by name (`env` of each row), as a platform may hand them over: text or JSON. */
export type TableVariables<T extends FlagTable> = {
  [K in keyof T as T[K] extends { env: infer E extends string } ? E : never]?: string | number | boolean | object;
};

/** A table, its rows' literal types kept (variable names, choices), so that values and variables are typed from it. */
export function defineTable<const T extends FlagTable>(table: T): T {
  return table;
}

/** Where a table's values come from. */
export interface TableSources {
  /**
   * The command line's raw values by the table's key (flags.ts); absent when nothing is read from a command
   * line (a Worker), and then every setting is named by its variable in messages.
   */
  given?: ReadonlyMap<string, string | boolean>;
  /** The environment: read for settings with `env` that no flag set. A non-string value (a Worker's JSON var) is read as its JSON text. */
  env?: Readonly<Record<string, unknown>>;
}

export interface TableRead<T extends FlagTable> {
  values: FlagValues<T>;
  /** Each simulation setting whose value is not its default, as given: `--delay-ms 20`, `LOCAL_CACHE_ONLY=true`. */
  simulating: string[];
}

/** The flag a row is read from on a command line, or undefined for a variable-only row. */
export function flagName(key: string, spec: FlagSpec): string | undefined {
  return spec.flag === false ? undefined : (spec.flag ?? key);
}

/** Every row's value: its flag's, else its variable's, else its default; a bad one throws a `UsageError` naming it. */
export function readTable<T extends FlagTable>(table: T, sources: TableSources): TableRead<T> {
  const values: Record<string, unknown> = {};
  const simulating: string[] = [];
  for (const [key, spec] of Object.entries(table)) {
    const flag = sources.given ? flagName(key, spec) : undefined;
    const fromFlag = sources.given?.get(key);
    const variable = spec.env === undefined ? undefined : variableText(sources.env?.[spec.env]);
    const raw = fromFlag ?? variable;
    const label =
      flag === undefined ? `${spec.env ?? key}:` : spec.env === undefined ? `--${flag}` : `--${flag} (${spec.env})`;
    const value = settingValue(label, spec, raw);
    values[key] = value;
    if (spec.simulation && raw !== undefined && JSON.stringify(value) !== JSON.stringify(defaultValue(spec))) {
      // Named as the reading names it: by its flag on a command line (whichever source set it), else its variable.
      simulating.push(
        flag === undefined ? `${spec.env ?? key}=${raw}` : spec.type === "boolean" ? `--${flag}` : `--${flag} ${raw}`,
      );
    }
  }
  return { values: values as FlagValues<T>, simulating };
}

/** A variable's text: a string as it is, a platform's JSON value as its JSON; unset and empty are undefined. */
function variableText(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function defaultValue(spec: FlagSpec): unknown {
  if (spec.type === "boolean") return false;
  if (spec.type === "list") return [...(spec.default ?? [])];
  return spec.default;
}

/** A decimal number as written by hand: digits, a point, a sign; no exponent, hex or `Infinity`. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function settingValue(label: string, spec: FlagSpec, raw: string | boolean | undefined): unknown {
  if (raw === undefined) {
    if ("required" in spec && spec.required) throw new UsageError(`${label.replace(/:$/, "")} is required`);
    return defaultValue(spec);
  }
  if (spec.type === "boolean") {
    if (raw === true || raw === "true") return true;
    if (raw === "false") return false;
    throw new UsageError(`${label} must be true or false, got ${JSON.stringify(raw)}`);
  }
  const text = String(raw);
  switch (spec.type) {
    case "string":
      if (spec.choices && !spec.choices.includes(text)) {
        throw new UsageError(`${label} must be ${oneOf(spec.choices)}, got ${JSON.stringify(text)}`);
      }
      return text;
    case "number": {
      const n = DECIMAL.test(text.trim()) ? Number(text) : Number.NaN;
      const { min = 0, max = Number.POSITIVE_INFINITY, integer = false } = spec;
      if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
        const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`;
        throw new UsageError(
          `${label} must be ${integer ? "an integer" : "a number"} ${range}, got ${JSON.stringify(text)}`,
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
          `${label.replace(/:$/, "")}: ${unknown.length ? `unknown ${unknown.join(", ")}; ` : ""}one or more of ${spec.choices?.join(", ") ?? "values"}, comma-separated`,
        );
      }
      return items;
    }
    case "parsed":
      try {
        return spec.parse(text);
      } catch (err) {
        if (err instanceof UsageError) throw new UsageError(`${label} ${err.message}`);
        throw err;
      }
  }
}

const oneOf = (choices: readonly string[]) =>
  choices.length <= 2 ? choices.join(" or ") : `one of ${choices.join(", ")}`;

/** The line every tier logs once when any simulation setting is on (`TableRead.simulating`); undefined when none is. */
export function simulationWarning(simulating: readonly string[]): string | undefined {
  if (simulating.length === 0) return undefined;
  return `SIMULATION SETTINGS ON (${simulating.join(", ")}): for tests and local stacks only, never in production`;
}

/** A row's value name in `--help` and the docs: its placeholder, else its type's. */
export function placeholder(spec: FlagSpec): string {
  if (spec.type === "boolean") return "";
  if (spec.placeholder) return spec.placeholder;
  if ("choices" in spec && spec.choices)
    return spec.type === "list" ? `${spec.choices.join(",")}` : spec.choices.join("|");
  return { string: "S", number: "N", list: "LIST", parsed: "VALUE" }[spec.type];
}

/** A row's default as the docs' tables write it (Markdown): `defaultText`, else the default in backticks. */
export function markdownDefault(spec: FlagSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const value = defaultValue(spec);
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  return `\`${Array.isArray(value) ? value.join(",") : String(value)}\``;
}

/** The default as `--help` writes it: without backticks, with the unit of a plain number. */
function helpDefault(spec: FlagSpec): string | undefined {
  if (spec.type === "boolean") return undefined;
  const shown = markdownDefault(spec)?.replaceAll("`", "");
  if (shown === undefined) return undefined;
  return spec.unit && /^-?[\d.]+$/.test(shown) ? `${shown} ${spec.unit}` : shown;
}

export interface HelpOptions {
  /** Which rows (default all). */
  rows?: (spec: FlagSpec) => boolean;
  /** End with `--help` itself (default true). */
  helpLine?: boolean;
}

/**
 * The `--help` lines of a table, one row each (continuations aligned), then `--help` itself: the flag and its
 * placeholder, the variable when rows have one, the help and the notes (required, default, other spellings).
 */
export function flagHelp(table: FlagTable, options: HelpOptions = {}): string {
  const entries = Object.entries(table).filter(([, spec]) => options.rows?.(spec) ?? true);
  const withVariables = entries.some(([, spec]) => spec.env !== undefined);
  const rows = entries.map(([key, spec]) => {
    const flag = flagName(key, spec);
    const short = spec.short ? `-${spec.short}, ` : "";
    const value = placeholder(spec);
    const left = flag === undefined ? "" : `${short}--${flag}${value ? ` ${value}` : ""}`;
    const shown = helpDefault(spec);
    const notes = [
      "required" in spec && spec.required ? "required" : undefined,
      shown !== undefined ? `default ${shown}` : undefined,
      spec.aliases?.length ? `also ${spec.aliases.map((a) => `--${a}`).join(", ")}` : undefined,
    ].filter(Boolean);
    // After a help of several lines the notes get a line of their own, so they do not read as its last words.
    const gap = spec.help.includes("\n") ? "\n" : " ";
    return {
      left,
      variable: spec.env ?? "",
      text: notes.length ? `${spec.help}${gap}(${notes.join("; ")})` : spec.help,
    };
  });
  if (options.helpLine ?? true) rows.push({ left: "--help", variable: "", text: "this text" });
  const width = Math.max(...rows.map((r) => r.left.length)) + 2;
  const variableWidth = withVariables ? Math.max(...rows.map((r) => r.variable.length)) + 2 : 0;
  const indent = `\n  ${" ".repeat(width + variableWidth)}`;
  return rows
    .map(
      ({ left, variable, text }) =>
        `  ${left.padEnd(width)}${withVariables ? variable.padEnd(variableWidth) : ""}${text.split("\n").join(indent)}`,
    )
    .join("\n");
}
