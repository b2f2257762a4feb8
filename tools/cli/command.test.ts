import { describe, expect, it } from "vitest";
import { type Command, commandHelp, defineCommand, runCommand, runSubcommands } from "./command.ts";
import { RefusedError } from "./errors.ts";

function output() {
  const lines: string[] = [];
  const notes: string[] = [];
  return { lines, notes, out: { log: (l: string) => lines.push(l), note: (l: string) => notes.push(l) } };
}

const echo = defineCommand({
  name: "ok",
  summary: "succeeds",
  usage: "npm run tool -- ok --x N [FILE]",
  description: "Echoes its flags.",
  flags: {
    x: { type: "number", placeholder: "N", required: true, help: "a number" },
    name: { type: "string", default: "anon", help: "who" },
  },
  parse: { positionals: { min: 0, max: 1 } },
  run: async (values, { positionals }, out) => {
    // Typed from the table: x is a number, name a string.
    out.log(`x=${values.x + 1} name=${values.name.toUpperCase()} file=${positionals[0] ?? "-"}`);
    return 0;
  },
});

const commands: Command[] = [
  echo,
  defineCommand({
    name: "refuse",
    summary: "refuses",
    usage: "npm run tool -- refuse",
    flags: {},
    run: () => Promise.reject(new RefusedError("fix the file")),
  }),
];

describe("runCommand", () => {
  it("runs with the flags converted and the positionals", async () => {
    const { lines, out } = output();
    expect(await runCommand(echo, ["--x", "1", "f.csv"], out)).toBe(0);
    expect(lines).toEqual(["x=2 name=ANON file=f.csv"]);
  });

  it("prints the help generated from the table, exit 0", async () => {
    const { lines, out } = output();
    expect(await runCommand(echo, ["--x", "oops", "--help"], out)).toBe(0);
    expect(lines).toEqual([
      [
        "Usage: npm run tool -- ok --x N [FILE]",
        "",
        "Echoes its flags.",
        "",
        "  --x N     a number (required)",
        "  --name S  who (default anon)",
        "  --help    this text",
      ].join("\n"),
    ]);
    expect(commandHelp(echo)).toBe(lines[0]);
  });

  it.each([
    [["--x", "1", "--y"], "unknown flag --y"],
    [["--x", "one"], '--x must be a number >= 0, got "one"'],
    [["--name", "a"], "--x is required"],
    [["--x", "1", "a", "b"], "takes 0 to 1 argument, got 2: b"],
  ])("%j exits 2 naming what was wrong", async (argv, message) => {
    const { notes, out } = output();
    expect(await runCommand(echo, argv, out, "tool ok", "npm run tool -- ok")).toBe(2);
    expect(notes).toEqual([`tool ok: ${message}\n(npm run tool -- ok --help)`]);
  });
});

describe("runSubcommands", () => {
  it("dispatches to the named subcommand with the rest of the arguments", async () => {
    const { lines, out } = output();
    expect(await runSubcommands(["ok", "--x", "1"], commands, out, "tool")).toBe(0);
    expect(lines).toEqual(["x=2 name=ANON file=-"]);
  });

  it("lists the subcommands for --help (0) and without one (2), and prints a subcommand's help", async () => {
    const help = output();
    expect(await runSubcommands(["--help"], commands, help.out, "tool")).toBe(0);
    expect(help.lines[0]).toContain("  ok      succeeds\n  refuse  refuses");
    expect(await runSubcommands([], commands, output().out, "tool")).toBe(2);
    const usage = output();
    expect(await runSubcommands(["ok", "--help"], commands, usage.out, "tool")).toBe(0);
    expect(usage.lines[0]).toMatch(/^Usage: npm run tool -- ok --x N \[FILE\]\n/);
  });

  it.each([
    [["nope"], 2, 'tool: unknown subcommand "nope"; one of ok, refuse'],
    [["ok"], 2, "tool ok: --x is required\n(npm run tool -- ok --help)"],
    [["refuse"], 1, "tool refuse: refused: fix the file"],
  ])("%j exits %d with a message", async (argv, code, message) => {
    const { notes, out } = output();
    expect(await runSubcommands(argv, commands, out, "tool")).toBe(code);
    expect(notes).toEqual([message]);
  });
});
