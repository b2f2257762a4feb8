import { describe, expect, it } from "vitest";
import { UsageError } from "./errors.ts";
import { defineTable, flagHelp, markdownDefault, readTable, simulationWarning } from "./table.ts";

const TABLE = defineTable({
  budgetMs: { env: "BUDGET_MS", type: "number", min: 1, default: 10, unit: "ms", help: "budget" },
  share: { env: "SHARE", type: "number", min: 0, max: 0.9, default: 0.5, help: "share" },
  retries: { env: "RETRIES", type: "number", integer: true, min: 0, help: "retries" },
  mode: { env: "MODE", type: "string", choices: ["a", "b"], default: "a", help: "mode" },
  secret: { flag: false, env: "SECRET", type: "string", defaultText: "unset", help: "secret" },
  port: {
    env: "PORT",
    type: "parsed",
    default: 80,
    help: "port",
    parse(raw): number | undefined {
      if (raw === "off") return undefined;
      if (/^\d+$/.test(raw)) return Number(raw);
      throw new UsageError("must be a port or off");
    },
  },
  override: { env: "OVERRIDE", type: "boolean", simulation: true, help: "simulated location" },
  slowMs: { flag: "slow-ms", env: "SLOW_MS", type: "number", default: 0, simulation: true, help: "slower" },
});

describe("readTable from variables (a Worker's)", () => {
  it("gives every row its default, typed, and reads text or a platform's JSON values alike", () => {
    expect(readTable(TABLE, {}).values).toEqual({
      budgetMs: 10,
      share: 0.5,
      retries: undefined,
      mode: "a",
      secret: undefined,
      port: 80,
      override: false,
      slowMs: 0,
    });
    const { values } = readTable(TABLE, {
      env: { BUDGET_MS: 25, SHARE: "0.25", RETRIES: " 3 ", MODE: "b", SECRET: "s", PORT: "off", OVERRIDE: true },
    });
    expect(values).toMatchObject({ budgetMs: 25, share: 0.25, retries: 3, mode: "b", secret: "s", port: undefined });
    expect(values.override).toBe(true);
    expect(readTable(TABLE, { env: { BUDGET_MS: "", OVERRIDE: "false" } }).values).toMatchObject({
      budgetMs: 10,
      override: false,
    });
  });

  it.each([
    [{ BUDGET_MS: "ten" }, 'BUDGET_MS: must be a number >= 1, got "ten"'],
    [{ BUDGET_MS: "1e3" }, 'BUDGET_MS: must be a number >= 1, got "1e3"'],
    [{ BUDGET_MS: "0x10" }, 'BUDGET_MS: must be a number >= 1, got "0x10"'],
    [{ BUDGET_MS: "Infinity" }, 'BUDGET_MS: must be a number >= 1, got "Infinity"'],
    [{ SHARE: 1 }, 'SHARE: must be a number from 0 to 0.9, got "1"'],
    [{ RETRIES: "2.5" }, 'RETRIES: must be an integer >= 0, got "2.5"'],
    [{ MODE: "c" }, 'MODE: must be a or b, got "c"'],
    [{ PORT: "http" }, "PORT: must be a port or off"],
    [{ OVERRIDE: "yes" }, 'OVERRIDE: must be true or false, got "yes"'],
  ])("%j: a UsageError naming the variable", (env, message) => {
    expect(() => readTable(TABLE, { env })).toThrow(new UsageError(message));
  });

  it("lets an error that is not a value's mistake through as it is", () => {
    const broken = defineTable({
      x: {
        env: "X",
        type: "parsed",
        help: "x",
        parse: () => {
          throw new TypeError("a bug");
        },
      },
    });
    expect(() => readTable(broken, { env: { X: "1" } })).toThrow(TypeError);
  });
});

describe("readTable from a command line and variables (a pool's)", () => {
  const given = (entries: [string, string | boolean][]) => new Map(entries);

  it("takes a flag over its variable, names rows by flag and variable, and variable-only rows by the variable", () => {
    const env = { BUDGET_MS: "30", SECRET: "s" };
    expect(readTable(TABLE, { given: given([["budgetMs", "40"]]), env }).values).toMatchObject({
      budgetMs: 40,
      secret: "s",
    });
    expect(() => readTable(TABLE, { given: given([["slowMs", "-1"]]) })).toThrow(
      new UsageError('--slow-ms (SLOW_MS) must be a number >= 0, got "-1"'),
    );
    expect(() => readTable(TABLE, { given: given([]), env: { PORT: "x" } })).toThrow(
      new UsageError("--port (PORT) must be a port or off"),
    );
  });

  it("lists the simulation rows that are on, by flag on a command line and by variable otherwise", () => {
    expect(readTable(TABLE, { given: given([]), env: { SLOW_MS: "0" } }).simulating).toEqual([]);
    expect(readTable(TABLE, { given: given([["override", true]]), env: { SLOW_MS: "5" } }).simulating).toEqual([
      "--override",
      "--slow-ms 5",
    ]);
    expect(readTable(TABLE, { env: { OVERRIDE: "true", SLOW_MS: "5" } }).simulating).toEqual([
      "OVERRIDE=true",
      "SLOW_MS=5",
    ]);
  });
});

describe("simulationWarning", () => {
  it("is one line for both tiers, naming each setting on; none without", () => {
    expect(simulationWarning([])).toBeUndefined();
    expect(simulationWarning(["--delay-ms 20", "LOCAL_CACHE_ONLY=true"])).toBe(
      "SIMULATION SETTINGS ON (--delay-ms 20, LOCAL_CACHE_ONLY=true): for tests and local stacks only, never in production",
    );
  });
});

describe("the table as documented", () => {
  it("writes defaults as the docs' tables do, and --help with a column of variables", () => {
    expect(markdownDefault(TABLE.budgetMs)).toBe("`10`");
    expect(markdownDefault(TABLE.secret)).toBe("unset");
    expect(markdownDefault(TABLE.retries)).toBeUndefined();
    const help = flagHelp(TABLE, { rows: (spec) => spec.env !== "SLOW_MS" && spec.env !== "OVERRIDE" });
    expect(help.split("\n")).toEqual([
      "  --budgetMs N  BUDGET_MS  budget (default 10 ms)",
      "  --share N     SHARE      share (default 0.5)",
      "  --retries N   RETRIES    retries",
      "  --mode a|b    MODE       mode (default a)",
      "                SECRET     secret (default unset)",
      "  --port VALUE  PORT       port (default 80)",
      "  --help                   this text",
    ]);
  });
});
