/**
 * `npm run model -- <subcommand> [options]`: bring your own model (import, quantize, inspect). The
 * subcommands are listed in tools/model/commands.ts; docs/model-tool.md describes them.
 */
import { runSubcommandsMain } from "./cli/command.ts";
import { COMMANDS } from "./model/commands.ts";

runSubcommandsMain(COMMANDS, "model");
