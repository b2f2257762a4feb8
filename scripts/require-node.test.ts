import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nodeVersionProblem } from "./require-node.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

/** A Node older than engines on this machine (Debian's, say), if there is one. */
function olderNode(): string | undefined {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim();
      if (nodeVersionProblem(version, pkg.engines.node)) return candidate;
    } catch {
      // Not there.
    }
  }
  return undefined;
}

describe("nodeVersionProblem", () => {
  it("refuses a version below the range in one line naming both versions and the README's command", () => {
    const line = nodeVersionProblem("v20.20.2", ">=22.19.0")!;
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toContain("needs Node.js >=22.19.0");
    expect(line).toContain("this is Node.js 20.20.2");
    expect(line).toContain('export PATH="$(bash scripts/node-toolchain.sh 24):$PATH"');
    expect(nodeVersionProblem("22.18.9", ">=22.19.0")).toBeDefined();
  });

  it("accepts the range's own version and anything newer", () => {
    for (const version of ["22.19.0", "22.20.0", "23.0.0", "v24.22.3"]) {
      expect(nodeVersionProblem(version, ">=22.19.0")).toBeUndefined();
    }
  });

  it("runs before every npm script that starts a .ts entry point", () => {
    const tsEntries = Object.entries(pkg.scripts).filter(([, command]) => /\bnode\b.*\.ts\b/.test(command));
    expect(tsEntries.length).toBeGreaterThan(10);
    for (const [name, command] of tsEntries) {
      for (const run of command.split("&&")) {
        if (/\.ts\b/.test(run)) expect(run, name).toContain("node --import ./scripts/require-node.mjs ");
      }
    }
  });

  const old = olderNode();
  it.runIf(old)(`npm start's command on this machine's older Node (${old}) prints that one line, exit 1`, () => {
    const command = pkg.scripts.start!.replace(/^exec node /, "").split(" ");
    const run = spawnSync(old!, command, { cwd: ROOT, encoding: "utf8" });
    expect(run.status).toBe(1);
    const version = execFileSync(old!, ["--version"], { encoding: "utf8" }).trim();
    expect(run.stderr.trim().split("\n")).toEqual([nodeVersionProblem(version, pkg.engines.node)]);
  });
});
