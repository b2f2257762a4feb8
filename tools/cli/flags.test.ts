import { describe, expect, it } from "vitest";
import { UsageError } from "./errors.ts";
import { type FlagTable, flagHelp, parseFlags } from "./flags.ts";

const TABLE = {
  url: { type: "string", placeholder: "URL", required: true, help: "where" },
  rate: { type: "number", placeholder: "R", default: 50, min: 0.1, help: "per second" },
  workers: { type: "number", integer: true, min: 1, max: 8, help: "how many" },
  json: { type: "boolean", help: "JSON out" },
  mix: { type: "string", choices: ["realistic", "hot"], default: "realistic", help: "which rows" },
  phases: { type: "list", choices: ["a", "b", "c"], default: ["a", "b"], help: "what runs" },
  "duration-s": { type: "number", aliases: ["duration"], default: 10, help: "seconds" },
  env: { type: "string", short: "e", help: "environment" },
} as const satisfies FlagTable;

const parse = (argv: string[]) => parseFlags(TABLE, ["--url", "http://x", ...argv]).values;

describe("parseFlags", () => {
  it("gives each flag its default, typed", () => {
    expect(parse([])).toEqual({
      url: "http://x",
      rate: 50,
      workers: undefined,
      json: false,
      mix: "realistic",
      phases: ["a", "b"],
      "duration-s": 10,
      env: undefined,
    });
  });

  it("converts what is given, in both spellings of a value (--f v, --f=v), aliases and short flags", () => {
    expect(
      parse([
        "--rate=2.5",
        "--workers",
        "4",
        "--json",
        "--mix",
        "hot",
        "--phases",
        "c, a",
        "--duration",
        "3",
        "-e",
        "p",
      ]),
    ).toEqual({
      url: "http://x",
      rate: 2.5,
      workers: 4,
      json: true,
      mix: "hot",
      phases: ["c", "a"],
      "duration-s": 3,
      env: "p",
    });
  });

  it.each([
    [["--nope"], "unknown flag --nope"],
    [["--rat", "1"], "unknown flag --rat; did you mean --rate?"],
    [["--rate", "fast"], '--rate must be a number >= 0.1, got "fast"'],
    [["--rate", ""], '--rate must be a number >= 0.1, got ""'],
    [["--rate", "0"], '--rate must be a number >= 0.1, got "0"'],
    [["--workers", "2.5"], '--workers must be an integer from 1 to 8, got "2.5"'],
    [["--workers", "9"], '--workers must be an integer from 1 to 8, got "9"'],
    [["--mix", "cold"], '--mix must be realistic or hot, got "cold"'],
    [["--phases", "a,z"], "--phases: unknown z; one or more of a, b, c, comma-separated"],
    [["--phases", ","], "--phases: one or more of a, b, c, comma-separated"],
    [["--json=yes"], '--json takes no value, got "yes"'],
    [["--env"], "--env needs a value"],
    [["--env", "--json"], "--env needs a value"],
    [["extra"], "takes no arguments besides flags: extra"],
  ])("%j is refused naming the flag", (argv, message) => {
    expect(() => parse(argv)).toThrow(new UsageError(message));
  });

  it("refuses a missing required flag", () => {
    expect(() => parseFlags(TABLE, [])).toThrow(new UsageError("--url is required"));
  });

  it("hands unknown flags and positionals to another program, in order, with passThrough", () => {
    const { values, rest } = parseFlags(TABLE, ["--url", "u", "--var", "A:b", "--json", "--x=1", "-q"], {
      passThrough: true,
    });
    expect(values.json).toBe(true);
    expect(rest).toEqual(["--var", "A:b", "--x=1", "-q"]);
  });

  it("counts positionals", () => {
    expect(parseFlags({}, ["a.onnx"], { positionals: { min: 1, max: 1 } }).positionals).toEqual(["a.onnx"]);
    expect(() => parseFlags({}, [], { positionals: { min: 1, max: 1 } })).toThrow("takes 1 argument, got 0");
  });
});

describe("flagHelp", () => {
  it("writes one line per flag from the table: placeholder, help, default, aliases; continuations aligned", () => {
    expect(
      flagHelp({
        models: { type: "string", placeholder: "DIR", defaultText: "models/", help: "repository" },
        mix: { type: "string", choices: ["a", "b"], default: "a", help: "rows\nsecond line" },
        "duration-s": { type: "number", aliases: ["duration"], default: 10, help: "seconds" },
        json: { type: "boolean", help: "JSON" },
      }),
    ).toBe(
      [
        "  --models DIR    repository (default models/)",
        "  --mix a|b       rows",
        "                  second line",
        "                  (default a)",
        "  --duration-s N  seconds (default 10; also --duration)",
        "  --json          JSON",
        "  --help          this text",
      ].join("\n"),
    );
  });
});
