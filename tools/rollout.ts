/**
 * `npm run rollout -- <subcommand> [options]`: shadow and canary rollouts of a model version, decided by
 * sequential tests (docs/rollouts.md). The subcommands are listed in tools/rollout/commands.ts.
 */
import { runModelCli } from "./model/cli.ts";
import { ROLLOUT_COMMANDS } from "./rollout/commands.ts";

runModelCli(
  process.argv.slice(2),
  ROLLOUT_COMMANDS,
  { log: (line) => console.log(line), note: (line) => console.error(line) },
  "rollout",
).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`rollout: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
