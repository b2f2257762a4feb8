// Loaded before every npm script's entry point (package.json: `node --import ./scripts/require-node.mjs ...`), in
// plain JavaScript so that it runs on any Node: an older one than package.json's engines cannot strip the .ts
// entry point's types and would end in an ERR_UNKNOWN_FILE_EXTENSION stack trace. This says what to do instead.
import { readFileSync } from "node:fs";

/**
 * The one line for a Node.js `version` that `range` (engines' `>=X.Y.Z`) refuses; undefined when it is new
 * enough. Pure.
 */
export function nodeVersionProblem(version, range) {
  const wanted = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
  if (!wanted) throw new Error(`package.json engines.node must be ">=X.Y.Z", got ${JSON.stringify(range)}`);
  const have = version.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const need = Number(wanted[i + 1]);
    if ((have[i] ?? 0) > need) return undefined;
    if ((have[i] ?? 0) < need) {
      return (
        `edgecascade needs Node.js ${range.trim()} (24 LTS recommended) and this is Node.js ${version.replace(/^v/, "")}: ` +
        `put Node 24 first on PATH with  export PATH="$(bash scripts/node-toolchain.sh 24):$PATH"  (README.md, Quick start)`
      );
    }
  }
  return undefined;
}

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const problem = nodeVersionProblem(process.versions.node, engines.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
