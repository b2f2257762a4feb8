import { describe, expect, it } from "vitest";
import { RefusedError, runModelCli, type Subcommand, UsageError } from "./cli.ts";

function output() {
  const lines: string[] = [];
  const notes: string[] = [];
  return { lines, notes, out: { log: (l: string) => lines.push(l), note: (l: string) => notes.push(l) } };
}

const commands: Subcommand[] = [
  {
    name: "ok",
    summary: "succeeds",
    usage: "Usage: ok",
    run: async (argv, out) => {
      out.log(`ran with ${argv.join(" ")}`);
      return 0;
    },
  },
  {
    name: "usage",
    summary: "bad flags",
    usage: "Usage: usage",
    run: () => Promise.reject(new UsageError("--x is required")),
  },
  {
    name: "refuse",
    summary: "refuses",
    usage: "Usage: refuse",
    run: () => Promise.reject(new RefusedError("fix the file")),
  },
];

describe("runModelCli", () => {
  it("dispatches to the named subcommand with the rest of the arguments", async () => {
    const { lines, out } = output();
    expect(await runModelCli(["ok", "--a", "1"], commands, out)).toBe(0);
    expect(lines).toEqual(["ran with --a 1"]);
  });

  it("lists the subcommands for --help (0) and without one (2), and prints a subcommand's usage", async () => {
    const help = output();
    expect(await runModelCli(["--help"], commands, help.out)).toBe(0);
    expect(help.lines[0]).toContain("  ok      succeeds\n  usage   bad flags\n  refuse  refuses");
    expect(await runModelCli([], commands, output().out)).toBe(2);
    const usage = output();
    expect(await runModelCli(["ok", "--help"], commands, usage.out)).toBe(0);
    expect(usage.lines).toEqual(["Usage: ok"]);
  });

  it.each([
    [["nope"], 2, 'model: unknown subcommand "nope"; one of ok, usage, refuse'],
    [["usage"], 2, "model usage: --x is required\n(npm run model -- usage --help)"],
    [["refuse"], 1, "model refuse: refused: fix the file"],
  ])("%j exits %d with a message", async (argv, code, message) => {
    const { notes, out } = output();
    expect(await runModelCli(argv, commands, out)).toBe(code);
    expect(notes).toEqual([message]);
  });
});
