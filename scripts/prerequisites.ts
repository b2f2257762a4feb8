// `npm test`'s and `npm run bench`'s first step (package.json "pretest", "prebench"): make sure the system
// programs they use are there. Installs them with apt when run as root on Debian; otherwise names them and the
// one command that installs them, and exits 1 before anything runs.
//   node scripts/prerequisites.ts test|bench|probe
import { spawnSync } from "node:child_process";
import { defineCommand, runMain } from "../tools/cli/command.ts";
import { UsageError } from "../tools/cli/errors.ts";
import { onPath } from "./prerequisites/on-path.ts";
import { PREREQUISITES, type Prerequisite, prerequisitePlan } from "./prerequisites/plan.ts";

function run(command: string[]): boolean {
  const [file, ...args] = command;
  const result = spawnSync(file!, args, {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

runMain(
  defineCommand({
    name: "prerequisites",
    usage: `node scripts/prerequisites.ts [${Object.keys(PREREQUISITES).join("|")}]`,
    description:
      "Makes sure the system programs a set of commands uses are there (default: test); as root on Debian it\n" +
      "installs them with apt-get, otherwise it names them and the command that installs them, and exits 1.",
    flags: {},
    parse: { positionals: { min: 0, max: 1 } },
    run: async (_values, { positionals }) => ensure(positionals),
  }),
  { invocation: "node scripts/prerequisites.ts" },
);

function ensure(positionals: string[]): number {
  const which = positionals[0] ?? "test";
  if (!(which in PREREQUISITES)) {
    throw new UsageError(`unknown set "${which}" (use ${Object.keys(PREREQUISITES).join(" or ")})`);
  }
  const needed: readonly Prerequisite[] = PREREQUISITES[which as keyof typeof PREREQUISITES];
  const missing = (): Prerequisite[] => needed.filter((p) => !onPath(p.command));
  const plan = prerequisitePlan(missing(), { isRoot: process.getuid?.() === 0, hasApt: onPath("apt-get") });

  if (plan.action === "install") {
    console.error(`prerequisites: installing ${plan.packages.join(" ")} with apt-get`);
    if (!run(["apt-get", "update", "-qq"]) || !run(plan.command)) {
      console.error("prerequisites: apt-get failed; see its output above");
      return 1;
    }
    const still = missing();
    if (still.length > 0) {
      console.error(`prerequisites: still missing after apt-get: ${still.map((p) => p.command).join(", ")}`);
      return 1;
    }
  } else if (plan.action === "ask") {
    console.error(plan.message);
    return 1;
  }
  return 0;
}
