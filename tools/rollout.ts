/**
 * `npm run rollout -- <subcommand> [options]`: shadow and canary rollouts of a model version, decided by
 * sequential tests (docs/rollouts.md). The subcommands are listed in tools/rollout/commands.ts.
 */
import { runSubcommandsMain } from "./cli/command.ts";
import { ROLLOUT_COMMANDS } from "./rollout/commands.ts";

runSubcommandsMain(ROLLOUT_COMMANDS, "rollout");
